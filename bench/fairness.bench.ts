/**
 * Fair dispatch between tenants (docs/fair-dispatch.md), on vs off (`FAIR_DISPATCH`), same run: tenant
 * `flood` queues `BENCH_FAIR_SESSIONS` sessions × `BENCH_FAIR_INPUTS` inputs before the worker starts;
 * once the worker is busy with it (200 inputs done), tenant `late` sends the first input of 20
 * sessions. Per mode: the late inputs' start delay (accept → `started_at`, Postgres clock) and the
 * flood inputs that started meanwhile, then the time to finish everything and the Redis commands sent
 * per input (this process holds the producer and the worker: all of them, counted client side).
 * One in-process worker (`WORKER_CONCURRENCY` 8), the zero-latency scripted model, `DRAIN_SLICE_INPUTS` 10.
 *
 * Run alone: `node --max-semi-space-size=32 --import tsx bench/fairness.bench.ts` (BENCH_FAIR_SESSIONS,
 * default 500; BENCH_FAIR_INPUTS, default 10; BENCH_FAIR_SWEEP_MS, the sweeper period, default 5000;
 * BENCH_FAIR_MODES, default `on,off`). Writes bench/results/fairness.json. About 2 minutes;
 * bounded at 300 s.
 */
import { Redis } from 'ioredis';
import { acceptAndKick } from '../src/fleet/accept-input.js';
import { kickSession } from '../src/fleet/kick.js';
import { createPgPool } from '../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../src/store/postgres-session-store.js';
import { fairDispatch, tenantSettingsCache } from '../src/store/tenants/tenant-settings-source.js';
import { QueueShards } from '../src/fleet/queue-shards.js';
import { singleNodeLayout } from '../src/fleet/redis-layout.js';
import { benchConfig, countRedisCommands, createBenchDatabase, deleteQueueKeys, REDIS_URL, startBenchWorker, uniqueName } from './lib/fleet.js';
import { deadline, percentile, report, round, sleep } from './lib/stats.js';

const SESSIONS = Number(process.env.BENCH_FAIR_SESSIONS ?? 500);
const INPUTS = Number(process.env.BENCH_FAIR_INPUTS ?? 10);
const LATE = 20;
const CONCURRENCY = 8;
const SWEEP_EVERY_MS = process.env.BENCH_FAIR_SWEEP_MS ?? '5000';
const MODES = (process.env.BENCH_FAIR_MODES ?? 'on,off').split(',').map((mode) => mode.trim() === 'on');

interface ModeResult {
  fairDispatch: boolean;
  lateWaitMs: { p50: number; max: number };
  floodStartedMeanwhile: { p50: number; max: number };
  floodPendingWhenLateDone: number;
  totalSeconds: number;
  redisCommandsPerInput: number;
  redisCommandsByName: Record<string, number>;
}

async function runMode(fair: boolean): Promise<ModeResult> {
  const db = await createBenchDatabase(`fair_${fair ? 'on' : 'off'}`);
  const queueName = uniqueName('fair');
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY), DRAIN_SLICE_INPUTS: '10', SWEEP_EVERY_MS, FAIR_DISPATCH: String(fair) });
  const pgPool = createPgPool(db.url);
  const store = new PostgresSessionStore(pgPool);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = QueueShards.open(singleNodeLayout(queueName), redis);
  const dispatch = fairDispatch(fair, tenantSettingsCache(pgPool, () => undefined), redis);
  const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await pgPool.query<{ n: number }>(sql, params)).rows[0]!.n);
  const countTenant = (tenant: string, statuses: string[]) =>
    count(`SELECT count(*)::int AS n FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = $1 AND i.status = ANY($2)`, [tenant, statuses]);
  const flood = Array.from({ length: SESSIONS }, (_, i) => `flood-${i}`);
  for (let n = 0; n < INPUTS; n += 1) {
    await Promise.all(flood.map((sessionId) => store.acceptInput({ sessionId, tenant: 'flood', kind: 'send', payload: { input: `${sessionId} #${n}` }, maxBytes: 1 << 20 })));
  }
  const counter = countRedisCommands();
  const started = performance.now();
  for (const sessionId of flood) await kickSession({ queue, fair: dispatch }, { sessionId, tenant: 'flood' });
  const worker = await startBenchWorker(config);
  try {
    while ((await countTenant('flood', ['done'])) < 200) await sleep(20);
    for (let i = 0; i < LATE; i += 1) {
      await acceptAndKick({ store, queue, fair: dispatch, maxInputBytes: 1 << 20 }, { sessionId: `late-${i}`, tenant: 'late', kind: 'send', payload: { input: 'hello' } });
    }
    while ((await countTenant('late', ['done'])) < LATE) await sleep(20);
    const floodPending = await countTenant('flood', ['pending']);
    const { rows } = await pgPool.query<{ waitMs: number; floodStarted: number }>(
      `SELECT (extract(epoch FROM l.started_at - l.accepted_at) * 1000)::float8 AS "waitMs",
              (SELECT count(*) FROM session_inputs f JOIN sessions s ON s.id = f.session_id
                WHERE s.tenant = 'flood' AND f.started_at > l.accepted_at AND f.started_at <= l.started_at)::int AS "floodStarted"
         FROM session_inputs l JOIN sessions ls ON ls.id = l.session_id WHERE ls.tenant = 'late'`,
    );
    while ((await countTenant('flood', ['done'])) < SESSIONS * INPUTS) await sleep(50);
    const totalSeconds = (performance.now() - started) / 1000;
    const commands = counter.read();
    const total = Object.values(commands).reduce((sum, n) => sum + n, 0);
    const inputs = SESSIONS * INPUTS + LATE;
    const waits = rows.map((row) => row.waitMs);
    const meanwhile = rows.map((row) => row.floodStarted);
    return {
      fairDispatch: fair,
      lateWaitMs: { p50: round(percentile(waits, 50), 0), max: round(Math.max(...waits), 0) },
      floodStartedMeanwhile: { p50: percentile(meanwhile, 50), max: Math.max(...meanwhile) },
      floodPendingWhenLateDone: floodPending,
      totalSeconds: round(totalSeconds, 1),
      redisCommandsPerInput: round(total / inputs, 2),
      redisCommandsByName: Object.fromEntries(Object.entries(commands).map(([name, n]) => [name, round(n / inputs, 2)]).filter(([, n]) => (n as number) >= 0.01)),
    };
  } finally {
    counter.restore();
    await worker.close({ graceMs: 5_000, force: true });
    await queue.close();
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
    await pgPool.end();
    await db.drop();
  }
}

const done = deadline(300_000, 'fairness bench');
const results: ModeResult[] = [];
for (const fair of MODES) results.push(await runMode(fair));
done();
const on = results.find((mode) => mode.fairDispatch) ?? null;
const off = results.find((mode) => !mode.fairDispatch) ?? null;
const table = [
  '| FAIR_DISPATCH | late tenant first-input start delay p50 / max | flood inputs started meanwhile p50 / max | flood inputs still pending | all done | Redis commands per input |',
  '|---|---|---|---|---|---|',
  ...results.map((mode) => `| ${mode.fairDispatch} | ${mode.lateWaitMs.p50} / ${mode.lateWaitMs.max} ms | ${mode.floodStartedMeanwhile.p50} / ${mode.floodStartedMeanwhile.max} | ${mode.floodPendingWhenLateDone} | ${mode.totalSeconds} s | ${mode.redisCommandsPerInput} |`),
];
console.error(table.join('\n'));
await report({
  name: 'fairness',
  command: 'node --max-semi-space-size=32 --import tsx bench/fairness.bench.ts',
  runs: 1,
  workload: { floodSessions: SESSIONS, floodInputsPerSession: INPUTS, lateSessions: LATE, workerConcurrency: CONCURRENCY, sliceInputs: 10, sweepEveryMs: Number(SWEEP_EVERY_MS) },
  on,
  off,
  table,
  targets: [
    { target: 'late tenant waits a few slices with fair dispatch (flood inputs started meanwhile ≤ 3 slices per slot)', value: on?.floodStartedMeanwhile.max ?? null, met: on === null ? null : on.floodStartedMeanwhile.max <= 3 * CONCURRENCY * 10 },
  ],
});
