/**
 * Scale-out: 1, 2 and 4 real worker processes (`node --import tsx src/cli/main.ts worker`,
 * LLM_PROVIDER=scripted — its offline echo model: one LLM call, no tool, one-chunk answer) against the
 * same Redis and Postgres, on this 2-core machine. Inputs are submitted from this process through
 * `SessionQueue.add` once every worker logged "worker started"; timed until all are finished (polling
 * Postgres every 50 ms). Alongside each: the raw BullMQ no-op floor (one process, concurrency 64),
 * and per input the Postgres commits (`pg_stat_database.xact_commit`) of the private database.
 *
 * Run alone: `npx tsx bench/scale-out.bench.ts` (BENCH_SCALE_INPUTS, default 300).
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { SessionQueue } from '../src/producer/session-queue.js';
import { spawnCliWorker, type CliWorker } from './lib/cli-worker.js';
import { cleanupAll, createBenchDatabase, deleteQueueKeys, REDIS_URL, uniqueName } from './lib/fleet.js';
import { bullmqFloor } from './lib/floors.js';
import { deadline, pool, report, round, sleep } from './lib/stats.js';

const N = Number(process.env.BENCH_SCALE_INPUTS ?? 300);
const SESSIONS = 200;
const CONCURRENCY = 64;

async function main(): Promise<void> {
  const stop = deadline(300_000, 'scale-out bench');
  const db = await createBenchDatabase('scale');
  const queueName = uniqueName('scale');
  const redis = new Redis(REDIS_URL);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const children = new Set<CliWorker>();
  const env = { DATABASE_URL: db.url, REDIS_URL, LOOPFLEET_QUEUE: queueName, LLM_PROVIDER: 'scripted', WORKER_CONCURRENCY: String(CONCURRENCY), LOG_LEVEL: 'info', METRICS_PORT: '0', LEASE_TTL_MS: '30000' };
  const results: { processes: number; inputsPerSec: number; floorBullmqJobsPerSec: number; ratioVsFloor: number; commitsPerInput: number; ms: number }[] = [];
  try {
    const finished = async () => Number((await client.query<{ c: string }>(`SELECT count(*) AS c FROM session_inputs WHERE status IN ('done','failed','cancelled')`)).rows[0]!.c);
    const commits = async () => {
      await client.query('SELECT pg_stat_clear_snapshot()');
      return Number((await client.query<{ c: string }>('SELECT xact_commit AS c FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.c);
    };
    for (const processes of [1, 2, 4]) {
      const spawned = Array.from({ length: processes }, () => spawnCliWorker(env));
      spawned.forEach((worker) => children.add(worker));
      await Promise.all(spawned.map((w) => w.ready));
      await sleep(500);
      const before = await finished();
      const commits0 = await commits();
      const t0 = performance.now();
      await pool(Array.from({ length: N }, (_, i) => i), 64, async (i) => {
        await producer.add('send', { sessionId: `p${processes}-${i % SESSIONS}`, input: `scale input ${i}` });
      });
      const limit = Date.now() + 120_000;
      while ((await finished()) < before + N) {
        if (Date.now() > limit) throw new Error(`scale-out with ${processes}: timed out`);
        await sleep(50);
      }
      const ms = performance.now() - t0;
      const commitsPerInput = ((await commits()) - commits0) / N;
      await Promise.all(spawned.map((worker) => worker.stop()));
      spawned.forEach((worker) => children.delete(worker));
      const floorMs = await bullmqFloor(REDIS_URL, N, CONCURRENCY, 64);
      const rate = N / (ms / 1000);
      const floor = N / (floorMs / 1000);
      results.push({ processes, inputsPerSec: round(rate, 1), floorBullmqJobsPerSec: round(floor, 0), ratioVsFloor: round(rate / floor, 3), commitsPerInput: round(commitsPerInput, 2), ms: round(ms, 0) });
    }
    const one = results[0]!;
    stop();
    await report({
      name: 'scale-out',
      command: 'npx tsx bench/scale-out.bench.ts',
      runs: 1,
      sizes: { inputsPerConfig: N, sessions: SESSIONS, workerConcurrencyPerProcess: CONCURRENCY, model: 'scripted echo (1 LLM call, no tool)' },
      figures: { byProcesses: results, speedup: Object.fromEntries(results.map((r) => [`x${r.processes}`, round(r.inputsPerSec / one.inputsPerSec, 2)])) },
      floor: { bullmqNoopJobsPerSec: results.map((r) => r.floorBullmqJobsPerSec) },
      ratio: { vsFloor: results.map((r) => r.ratioVsFloor) },
      targets: [{ target: 'informational: no target for scale-out on a 2-core machine', value: null, met: null }],
    });
  } finally {
    await Promise.all([...children].map((worker) => worker.stop()));
    await producer.close();
    await client.end();
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
    await db.drop();
    await cleanupAll();
  }
}

await main();
