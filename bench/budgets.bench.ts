/**
 * What budget enforcement costs per input: the standard input (user text → LLM call returning one
 * `noop` tool call → tool → LLM call streaming 10 deltas) through one in-process worker, with the
 * producer in its own process, in two workloads run in rotated rounds on the same database:
 * - `off`: no budget applies to the run's tenant;
 * - `on`: the tenant has a money budget per day and a token budget for its whole life (both far
 *   above what the run spends), and every session a token budget of its own, so each LLM call
 *   reserves on three budgets before it is made and settles them after.
 * Both use the `scripted` model (priced at zero, so the money budget is enforced on a real price).
 * Reports inputs/s of each, their ratio, Postgres statements per input, how many calls each budget
 * round trip carried (reserves and settles go in batches, docs/budgets.md), and checks that the `on`
 * runs settled everything (no reservation left, `used` equal to the tokens recorded).
 *
 * Run alone: `npx tsx bench/budgets.bench.ts` (BENCH_INPUTS per run, default 1000; BENCH_RUNS, default 5).
 */
import pg from 'pg';
import {
  benchConfig,
  cleanupAll,
  countPgStatements,
  createBenchDatabase,
  deleteQueueKeys,
  FinishCounter,
  REDIS_URL,
  StandardScriptedLlm,
  startBenchWorker,
  uniqueName,
} from './lib/fleet.js';
import { startProducerProcess } from './lib/producer-process.js';
import { BatchQueue } from '../src/store/batching/batch-queue.js';
import { processCpuMs } from './lib/process-cpu.js';
import { standardRun } from './lib/standard-run.js';
import { deadline, median, report, round } from './lib/stats.js';
import { Redis } from 'ioredis';

const N = Number(process.env.BENCH_INPUTS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SESSIONS = 200;
const CONCURRENCY = 128;
const PRODUCER_CONCURRENCY = 64;
type Workload = 'off' | 'on';

async function main(): Promise<void> {
  const stop = deadline(240_000, 'budgets bench');
  const db = await createBenchDatabase('budgets');
  const queueName = uniqueName('budgets');
  const redis = new Redis(REDIS_URL);
  const producerProcess = await startProducerProcess();
  const producer = producerProcess.sessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY) });
  const sql = new pg.Pool({ connectionString: db.url, max: 1 });
  const times: Record<Workload, number[]> = { off: [], on: [] };
  const statementsPerInput: Record<Workload, number[]> = { off: [], on: [] };
  const notDone: Record<Workload, number> = { off: 0, on: 0 };
  const nodeCpuPerInput: Record<Workload, number[]> = { off: [], on: [] };
  const postgresCpuPerInput: Record<Workload, number[]> = { off: [], on: [] };
  const leftReserved: number[] = [];
  const budgetBatches = countBudgetBatches();
  const usedMismatch: number[] = [];
  const callsPerBudgetRoundTrip: number[] = [];
  try {
    const fleetRun = async (workload: Workload, run: number, measure: boolean) => {
      const prefix = `${workload}-${run}`;
      const tenant = `t-${prefix}`;
      // Sessions of the run's own tenant, created before the clock starts.
      const ids = Array.from({ length: SESSIONS }, (_, i) => `${prefix}-${i}`);
      await sql.query(`INSERT INTO sessions (id, tenant) SELECT unnest($1::text[]), $2`, [ids, tenant]);
      if (workload === 'on') {
        await sql.query(
          `INSERT INTO budgets (scope, tenant, unit, period, limit_amount)
           VALUES ('tenant', $1, 'usd', 'day', 1000000000000000), ('tenant', $1, 'tokens', 'total', 1000000000000)`,
          [tenant],
        );
        await sql.query(
          `INSERT INTO budgets (scope, tenant, session_id, unit, period, limit_amount)
           SELECT 'session', $2, unnest($1::text[]), 'tokens', 'total', 1000000000`,
          [ids, tenant],
        );
      }
      const counter = new FinishCounter();
      const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm: new StandardScriptedLlm() });
      const statements = countPgStatements();
      budgetBatches.reset();
      const nodeBefore = process.cpuUsage();
      const backendsBefore = await backendCpu(sql, db.name);
      const result = await standardRun({ producer, counter, n: N, sessions: SESSIONS, producerConcurrency: PRODUCER_CONCURRENCY, prefix, timeoutMs: 90_000 });
      const counted = statements.read();
      const backendsAfter = await backendCpu(sql, db.name);
      const node = process.cpuUsage(nodeBefore);
      statements.restore();
      await worker.close({ graceMs: 5_000 });
      notDone[workload] += N - (result.finished['done'] ?? 0);
      if (workload === 'on') {
        const check = await sql.query<{ reserved: string; used: string; tokens: string }>(
          `SELECT (SELECT coalesce(sum(reserved), 0) FROM budget_usage u JOIN budgets b ON b.id = u.budget_id WHERE b.tenant = $1)::text AS reserved,
                  (SELECT coalesce(sum(used), 0) FROM budget_usage u JOIN budgets b ON b.id = u.budget_id
                    WHERE b.tenant = $1 AND b.scope = 'tenant' AND b.unit = 'tokens')::text AS used,
                  (SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM usage_rounds WHERE session_id = ANY($2))::text AS tokens`,
          [tenant, ids],
        );
        const row = check.rows[0]!;
        leftReserved.push(Number(row.reserved));
        usedMismatch.push(Number(row.used) - Number(row.tokens));
      }
      if (!measure) return;
      times[workload].push(result.ms);
      // The worker's statements only (the producer's are the same in both workloads).
      statementsPerInput[workload].push(counted.statements / N);
      nodeCpuPerInput[workload].push((node.user + node.system) / 1000 / N);
      let backendMs = 0;
      for (const [pid, ms] of backendsAfter) backendMs += ms - (backendsBefore.get(pid) ?? 0);
      postgresCpuPerInput[workload].push(backendMs / N);
      if (workload === 'on') callsPerBudgetRoundTrip.push(budgetBatches.callsPerBatch());
    };
    for (let run = -1; run < RUNS; run += 1) {
      const measure = run >= 0;
      const order: Workload[] = run % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const workload of order) await fleetRun(workload, run, measure);
    }
    const rate = (ms: number[]) => round(N / (median(ms) / 1000), 0);
    const off = rate(times.off);
    const on = rate(times.on);
    stop();
    await report({
      name: 'budgets',
      command: 'npx tsx bench/budgets.bench.ts',
      runs: RUNS,
      sizes: { inputsPerRun: N, warmupRounds: 1, sessions: SESSIONS, workerConcurrency: CONCURRENCY, producerConcurrency: PRODUCER_CONCURRENCY, budgetsPerCallOn: 3 },
      figures: {
        offInputsPerSec: off,
        onInputsPerSec: on,
        runsMs: { off: times.off.map((ms) => round(ms, 0)), on: times.on.map((ms) => round(ms, 0)) },
        workerPgStatementsPerInput: { off: round(median(statementsPerInput.off), 2), on: round(median(statementsPerInput.on), 2) },
        // CPU ms per input: this process (the worker and its store; the producer is another process), and
        // the Postgres backends of the bench database, the worker's and the producer's (one that closes mid-run is missed).
        cpuMsPerInput: {
          worker: { off: round(median(nodeCpuPerInput.off), 3), on: round(median(nodeCpuPerInput.on), 3) },
          postgres: { off: round(median(postgresCpuPerInput.off), 3), on: round(median(postgresCpuPerInput.on), 3) },
        },
        budgetCallsPerRoundTrip: round(median(callsPerBudgetRoundTrip), 1),
        notCompleted: notDone,
        // Every `on` run, warm-up included: what was still reserved after it, and tenant tokens used minus tokens recorded.
        reservedLeftAfterRun: leftReserved,
        usedMinusRecordedTokens: usedMismatch,
      },
      ratio: { onVsOff: round(on / off, 3) },
      targets: [
        { target: 'throughput with budgets on within 10% of off (same run)', value: round(on / off, 3), met: on / off >= 0.9 },
        { target: 'every reservation settled, budget use equal to recorded usage', value: JSON.stringify({ leftReserved, usedMismatch }), met: leftReserved.every((v) => v === 0) && usedMismatch.every((v) => v === 0) },
      ],
    });
  } finally {
    budgetBatches.restore();
    await sql.end();
    await producerProcess.close();
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
    await db.drop();
    await cleanupAll();
  }
}

/** CPU ms so far of each Postgres backend connected to `database`, by pid. */
async function backendCpu(sql: pg.Pool, database: string): Promise<Map<string, number>> {
  const { rows } = await sql.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [database]);
  const cpu = new Map<string, number>();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms !== null) cpu.set(String(pid), ms);
  }
  return cpu;
}

/** Counts the budget port's round trips (batches of reserves or settles) and the calls they carried. */
function countBudgetBatches(): { reset: () => void; callsPerBatch: () => number; restore: () => void } {
  const queue = BatchQueue.prototype as unknown as { dispatch: (this: unknown, batch: { item: unknown }[]) => Promise<void> };
  const dispatch = queue.dispatch;
  let batches = 0;
  let calls = 0;
  queue.dispatch = function (this: unknown, batch: { item: unknown }[]) {
    const item = batch[0]?.item;
    if (typeof item === 'object' && item !== null && 'callKey' in item) {
      batches += 1;
      calls += batch.length;
    }
    return dispatch.call(this, batch);
  };
  return {
    reset: () => {
      batches = 0;
      calls = 0;
    },
    callsPerBatch: () => (batches === 0 ? 0 : calls / batches),
    restore: () => {
      queue.dispatch = dispatch;
    },
  };
}

await main();
