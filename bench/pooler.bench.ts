/**
 * What `DATABASE_POOLER=transaction` costs (docs/postgres-pooling.md): the standard input (tool round,
 * streamed answer; scripted model) through one in-process worker and an in-process producer, in three
 * modes, rounds rotated so none always runs first:
 * - `named`: straight to Postgres, named prepared statements (`DATABASE_POOLER=none`, the default);
 * - `unnamed`: straight to Postgres, every statement unnamed (`DATABASE_POOLER=transaction` without a
 *   pooler): the cost of parsing and planning each statement every time, alone;
 * - `pgbouncer`: the same through Debian's PgBouncer in transaction mode (10 server connections):
 *   plus the pooler's hop.
 * Reports inputs/s and CPU per input (this process, Postgres, PgBouncer, machine), medians.
 *
 * Run: `npx tsx bench/pooler.bench.ts` (BENCH_INPUTS per run, default 1000; BENCH_RUNS, default 3).
 * Needs /usr/sbin/pgbouncer (apt-get install pgbouncer). Informational: no target.
 */
import { Redis } from 'ioredis';
import { SessionQueue } from '../src/producer/session-queue.js';
import { startPgBouncer } from '../test/support/pgbouncer.js';
import { ADMIN_URL, benchConfig, cleanupAll, createBenchDatabase, deleteQueueKeys, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { cpuPerItem, cpuSnapshot } from './lib/process-cpu.js';
import { standardRun } from './lib/standard-run.js';
import { deadline, median, report, round } from './lib/stats.js';

const N = Number(process.env.BENCH_INPUTS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SESSIONS = 200;
const CONCURRENCY = 128;
const PRODUCER_CONCURRENCY = 64;
const MODES = ['named', 'unnamed', 'pgbouncer'] as const;
type Mode = (typeof MODES)[number];

async function main(): Promise<void> {
  const stop = deadline(600_000, 'pooler bench');
  const db = await createBenchDatabase('pooler');
  const bouncer = await startPgBouncer(ADMIN_URL, { poolSize: 10 });
  const redis = new Redis(REDIS_URL);
  const rates: Record<Mode, number[]> = { named: [], unnamed: [], pgbouncer: [] };
  const cpu: Record<Mode, Record<string, number | null>[]> = { named: [], unnamed: [], pgbouncer: [] };
  try {
    const run = async (mode: Mode, round: number, measure: boolean) => {
      const queueName = uniqueName(`pooler_${mode}`);
      const env = {
        DATABASE_URL: mode === 'pgbouncer' ? bouncer.via(db.url) : db.url,
        DATABASE_POOLER: mode === 'named' ? 'none' : 'transaction',
        LOOPFLEET_QUEUE: queueName,
        WORKER_CONCURRENCY: String(CONCURRENCY),
      };
      const config = benchConfig(env);
      const counter = new FinishCounter();
      const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm: new StandardScriptedLlm() });
      const producer = new SessionQueue({ databaseUrl: env.DATABASE_URL, pooler: config.worker.pooler, redisUrl: REDIS_URL, queueName });
      const before = cpuSnapshot({ pgbouncer: bouncer.pid });
      const result = await standardRun({ producer, counter, n: N, sessions: SESSIONS, producerConcurrency: PRODUCER_CONCURRENCY, prefix: `${mode}-${round}`, timeoutMs: 120_000 });
      const after = cpuSnapshot({ pgbouncer: bouncer.pid });
      await producer.close();
      await worker.close({ graceMs: 5_000 });
      await deleteQueueKeys(redis, queueName);
      if ((result.finished['done'] ?? 0) !== N) throw new Error(`${mode}: ${JSON.stringify(result.finished)} of ${N}`);
      if (!measure) return;
      rates[mode].push((N / result.ms) * 1000);
      cpu[mode].push(cpuPerItem(before, after, N));
    };
    for (const mode of MODES) await run(mode, -1, false);
    for (let r = 0; r < RUNS; r += 1) {
      for (let i = 0; i < MODES.length; i += 1) await run(MODES[(i + r) % MODES.length]!, r, true);
    }
    const summary = Object.fromEntries(
      MODES.map((mode) => {
        const keys = Object.keys(cpu[mode][0] ?? {});
        const cpuMs = Object.fromEntries(keys.map((key) => [key, round(median(cpu[mode].map((entry) => entry[key] ?? Number.NaN)), 3)]));
        return [mode, { inputsPerSecond: round(median(rates[mode]), 0), runs: rates[mode].map((rate) => round(rate, 0)), cpuMsPerInput: cpuMs }];
      }),
    );
    await report({
      name: 'pooler',
      command: 'npx tsx bench/pooler.bench.ts',
      runs: RUNS,
      inputsPerRun: N,
      modes: summary,
      targets: [],
    });
  } finally {
    redis.disconnect();
    await bouncer.stop();
    await db.drop();
    await cleanupAll();
    stop();
  }
}

await main();
