/**
 * Throughput of the standard input (user text → LLM call returning one `noop` tool call → tool →
 * LLM call streaming the answer in 10 deltas), one in-process worker, zero-latency model, inputs
 * submitted through the real producer (`SessionQueue.add`) run in its own process
 * (`lib/producer-process.ts`), as producers are separate services (API servers) in production: its
 * work does not compete with the worker for this process's event loop, and its CPU is reported
 * separately as `producer` (and included in `machine`):
 * - `scripted`: the in-process scripted provider;
 * - `openai`: the real `openai` SDK against a loopback fake server run in its own process, like a remote
 *   model (its HTTP and SSE work off the worker's event loop): its CPU is reported separately as
 *   `llmServer`, and included in `machine`;
 * - `twoAgents`: the scripted provider, with the worker serving two agents (`alpha`, `beta`, each
 *   with the standard input's tool) and the run's sessions split between them: the cost of choosing
 *   an agent per input, next to `scripted` (one agent);
 * with the floors measured in the same run, rounds rotated so none always runs first:
 * - raw BullMQ no-op jobs (add + process, same producer and worker concurrency; added by the same
 *   producer process, processed in this one, so the ratio compares like with like);
 * - raw Postgres transactions, as many per input and with as many statements as the fleet used;
 * - raw pipelined `XADD`s, as many per input as the fleet wrote stream entries.
 * Also counts, per input, Postgres statements and write commits and Redis commands sent (client side:
 * this process's and, counted there the same way, the producer process's; summed over the measured
 * runs) — the inputs of the capacity model. (`pg_stat_database.xact_commit` is not used: Postgres 15
 * flushes it lazily, up to a second late, and runs of about a second lost most of their commits to
 * the gaps between them.)
 *
 * Run alone: `npx tsx bench/throughput.bench.ts` (sizes: BENCH_INPUTS per run, default 1000; BENCH_RUNS, default 5;
 * BENCH_FLOOR_INPUTS per floor run, default 5 × BENCH_INPUTS).
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import type { AgentDefinition } from '../src/agents/index.js';
import {
  benchConfig,
  cleanupAll,
  countPgStatements,
  countRedisCommands,
  createBenchDatabase,
  deleteQueueKeys,
  FinishCounter,
  REDIS_URL,
  StandardScriptedLlm,
  startBenchWorker,
  uniqueName,
} from './lib/fleet.js';
import { bullmqFloor, postgresFloor, xaddFloor } from './lib/floors.js';
import { startStandardOpenAiServerProcess } from './lib/openai-fake-process.js';
import { cpuPerItem, cpuSnapshot } from './lib/process-cpu.js';
import { startProducerProcess } from './lib/producer-process.js';
import { standardRun } from './lib/standard-run.js';
import { deadline, median, report, round } from './lib/stats.js';

const N = Number(process.env.BENCH_INPUTS ?? 1000);
// A whole unmeasured round of every workload at full size comes first: the first round of a process
// ran 1.1–1.4× slower for every workload, floors included (JIT tiering, connection and cache warm-up),
// and a 250-input warm-up of the two fleet runs alone did not absorb it.
// Five measured rounds, medians: with three, a single slow round moved the median.
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Floors are several times faster than the fleet: more items per floor run keep their runs long enough to time. */
const FLOOR_N = Number(process.env.BENCH_FLOOR_INPUTS ?? N * 5);
const SESSIONS = 200;
const CONCURRENCY = 128;
const PRODUCER_CONCURRENCY = 64;
/** The two agents of the `twoAgents` workload: the same model and tool, told apart by name only. */
const TWO_AGENTS: AgentDefinition[] = [
  { name: 'alpha', provider: 'scripted', tools: ['noop'], systemPrompt: 'You are alpha.' },
  { name: 'beta', provider: 'scripted', tools: ['noop'], systemPrompt: 'You are beta.' },
];
type FleetWorkload = 'scripted' | 'twoAgents' | 'openai';

/** What the measured runs of one provider counted, summed. */
interface CountTotals {
  inputs: number;
  statements: number;
  writeCommits: number;
  readOnly: number;
  batchedRows: number;
  batchedStatements: number;
  entries: number;
  sent: Record<string, number>;
}

function perInputOf(sum: CountTotals): Record<string, number> {
  const per = (count: number) => round(count / sum.inputs, 2);
  const total = Object.values(sum.sent).reduce((a, b) => a + b, 0);
  return {
    pgStatements: per(sum.statements),
    pgWriteCommits: per(sum.writeCommits),
    pgReadOnlyStatementsOrTx: per(sum.readOnly),
    // Group commit: how many sessions' writes one batched statement carried, on average.
    pgRowsPerBatchedStatement: round(sum.batchedRows / Math.max(1, sum.batchedStatements), 2),
    redisCommandsSent: per(total),
    streamEntries: per(sum.entries),
    ...Object.fromEntries(Object.entries(sum.sent).sort((a, b) => b[1] - a[1]).map(([name, count]) => [`redis.${name}`, per(count)])),
  };
}

async function main(): Promise<void> {
  const stop = deadline(240_000, 'throughput bench');
  const db = await createBenchDatabase('tput');
  const queueName = uniqueName('tput');
  const redis = new Redis(REDIS_URL);
  const fake = await startStandardOpenAiServerProcess();
  const producerProcess = await startProducerProcess();
  const producer = producerProcess.sessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const env = { DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY) };
  const scriptedConfig = benchConfig(env);
  const openaiConfig = benchConfig({ ...env, LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url, LLM_MODEL: 'gpt-bench' });
  const times: Record<FleetWorkload | 'bullmq' | 'postgres' | 'xadd', number[]> = { scripted: [], twoAgents: [], openai: [], bullmq: [], postgres: [], xadd: [] };
  const perInput: Record<string, Record<string, number>> = {};
  const totals: Record<string, CountTotals> = {};
  const cpuPerInput: Record<string, Record<string, number | null>[]> = { scripted: [], twoAgents: [], openai: [] };
  const sessionRows = new pg.Pool({ connectionString: db.url, max: 1 });
  const failures: Record<string, number> = {};
  const openaiRequests: number[] = [];
  try {
    const fleetRun = async (provider: FleetWorkload, run: number, measure: boolean) => {
      const counter = new FinishCounter();
      // Half of the run's sessions on each agent, created before the clock starts.
      if (provider === 'twoAgents') await createAgentSessions(sessionRows, `${provider}-${run}`, SESSIONS);
      const worker = await startBenchWorker(provider === 'openai' ? openaiConfig : scriptedConfig, {
        wrapStore: counter.wrapStore,
        ...(provider === 'openai' ? {} : { llm: new StandardScriptedLlm() }),
        ...(provider === 'twoAgents' ? { agents: TWO_AGENTS } : {}),
      });
      const statements = countPgStatements();
      const commands = countRedisCommands();
      const n = N;
      // The producer's CPU in every run; the fake server's only where it serves the run (it idles through the scripted ones).
      const pids: Record<string, number> = provider === 'openai' ? { llmServer: fake.pid, producer: producerProcess.pid } : { producer: producerProcess.pid };
      const cpuBefore = cpuSnapshot(pids);
      const requestsBefore = provider === 'openai' ? await fake.requests() : 0;
      const result = await standardRun({ producer, counter, n, sessions: SESSIONS, producerConcurrency: PRODUCER_CONCURRENCY, prefix: `${provider}-${run}`, timeoutMs: 90_000 });
      if (measure) cpuPerInput[provider]!.push(cpuPerItem(cpuBefore, cpuSnapshot(pids), n));
      statements.restore();
      commands.restore();
      await worker.close({ graceMs: 5_000 });
      const notDone = n - (result.finished['done'] ?? 0);
      failures[provider] = (failures[provider] ?? 0) + notDone;
      // The fake server's own count: the SDK path really made the standard input's two calls.
      if (provider === 'openai' && measure) openaiRequests.push((await fake.requests()) - requestsBefore);
      if (!measure) return;
      times[provider].push(result.ms);
      // Counts are summed over every measured run (per input: the sums over all their inputs).
      const sum = (totals[provider] ??= { inputs: 0, statements: 0, writeCommits: 0, readOnly: 0, batchedRows: 0, batchedStatements: 0, entries: 0, sent: {} });
      // The producer process counted its own share of the run's commands: added in, as when it ran here.
      const produced = result.produced;
      if (produced === undefined) throw new Error('throughput bench: the producer process reported no counts');
      const counted = statements.read();
      for (const key of Object.keys(counted) as (keyof typeof counted)[]) counted[key] += produced.pg[key];
      sum.inputs += n;
      sum.statements += counted.statements;
      sum.writeCommits += counted.writeCommits;
      sum.readOnly += counted.readOnly;
      sum.batchedRows += counted.batchedRows;
      sum.batchedStatements += counted.batchedStatements;
      // Entries written to this run's session streams: the fleet's events per input.
      for (let s = 0; s < SESSIONS; s += 1) sum.entries += await redis.xlen(`${queueName}:events:${provider}-${run}-${s}`);
      for (const sent of [commands.read(), produced.redis]) for (const [name, count] of Object.entries(sent)) sum.sent[name] = (sum.sent[name] ?? 0) + count;
      perInput[provider] = perInputOf(sum);
    };
    // Round -1 is the warm-up (JIT, connections, caches, the fake server): every workload, not measured.
    for (let run = -1; run < RUNS; run += 1) {
      const measure = run >= 0;
      const order = ['scripted', 'twoAgents', 'openai', 'bullmq', 'postgres', 'xadd'] as const;
      const rotated = measure ? [...order.slice(run % order.length), ...order.slice(0, run % order.length)] : order;
      for (const what of rotated) {
        if (what === 'scripted' || what === 'twoAgents' || what === 'openai') {
          await fleetRun(what, run, measure);
          continue;
        }
        let ms: number;
        if (what === 'bullmq') ms = await bullmqFloor(REDIS_URL, FLOOR_N, CONCURRENCY, PRODUCER_CONCURRENCY, producerProcess);
        else if (what === 'postgres') {
          const counts = perInput['scripted'] ?? { pgWriteCommits: 5, pgStatements: 25 };
          // The floor does the fleet's durable (writing) commits, with all its statements spread over them.
          const tx = counts['pgWriteCommits']!;
          ms = await postgresFloor(db.url, FLOOR_N, tx, counts['pgStatements']! / tx, 50, CONCURRENCY);
        } else {
          const entries = perInput['scripted']?.['streamEntries'] ?? 10;
          ms = await xaddFloor(redis, FLOOR_N, entries, SESSIONS, CONCURRENCY);
        }
        if (measure) times[what].push(ms);
      }
    }
    const rate = (ms: number[], items = N) => round(items / (median(ms) / 1000), 0);
    const scripted = rate(times.scripted);
    const twoAgents = rate(times.twoAgents);
    const openai = rate(times.openai);
    const bullmq = rate(times.bullmq, FLOOR_N);
    const postgres = rate(times.postgres, FLOOR_N);
    const xadd = rate(times.xadd, FLOOR_N);
    stop();
    await report({
      name: 'throughput',
      command: 'npx tsx bench/throughput.bench.ts',
      runs: RUNS,
      sizes: {
        inputsPerRun: N,
        floorItemsPerRun: FLOOR_N,
        warmupRounds: 1,
        sessions: SESSIONS,
        workerConcurrency: CONCURRENCY,
        producerConcurrency: PRODUCER_CONCURRENCY,
        workerProcesses: 1,
        // Where the openai workload's fake model ran: results from before this field had it in the bench process.
        llmServer: 'child process',
        // Where the producer (and the BullMQ floor's adds) ran: results from before this field had it in the bench process.
        producer: 'child process',
      },
      figures: {
        scriptedInputsPerSec: scripted,
        twoAgentsInputsPerSec: twoAgents,
        openaiInputsPerSec: openai,
        runsMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map((ms) => round(ms, 0))])),
        notCompleted: failures,
        openaiRequestsPerInput: openaiRequests.length === 0 ? null : round(openaiRequests.reduce((a, b) => a + b, 0) / (openaiRequests.length * N), 2),
        // Milliseconds of CPU per input, by process (Linux /proc; medians over the runs). Node is this
        // process: the worker; producer is the producer's own process; for openai, llmServer is the fake
        // server's own process (both also counted in machine, the whole machine).
        cpuMsPerInput: Object.fromEntries(
          Object.entries(cpuPerInput).map(([provider, runs]) => [
            provider,
            Object.fromEntries(Object.keys(runs[0] ?? {}).map((key) => {
              const values = runs.map((entry) => entry[key]).filter((value): value is number => value !== null);
              return [key, values.length === 0 ? null : round(median(values), 2)];
            })),
          ]),
        ),
      },
      floor: {
        bullmqNoopJobsPerSec: bullmq,
        postgresInputsPerSec: postgres,
        postgresWriteCommitsPerSec: round(postgres * (perInput['scripted']?.['pgWriteCommits'] ?? 0), 0),
        xaddInputsPerSec: xadd,
        xaddEntriesPerSec: round(xadd * Math.round(perInput['scripted']?.['streamEntries'] ?? 0), 0),
      },
      ratio: {
        scriptedVsBullmq: round(scripted / bullmq, 3),
        twoAgentsVsScripted: round(twoAgents / scripted, 3),
        openaiVsBullmq: round(openai / bullmq, 3),
        scriptedVsPostgres: round(scripted / postgres, 3),
        scriptedVsXadd: round(scripted / xadd, 3),
      },
      perInput,
      targets: [
        { target: 'scripted standard inputs >= 1000/s, one worker process', value: scripted, met: scripted >= 1000 },
        { target: 'openai-SDK standard inputs >= 600/s, one worker process', value: openai, met: openai >= 600 },
        { target: 'scripted >= 20% of the raw BullMQ floor (same run)', value: round(scripted / bullmq, 3), met: scripted / bullmq >= 0.2 },
        { target: 'two agents on one worker within noise of one agent (twoAgents / scripted >= 0.95)', value: round(twoAgents / scripted, 3), met: twoAgents / scripted >= 0.95 },
        { target: 'no more than one Postgres commit per loop step: durable commits per input (see RESULTS.md for the breakdown)', value: perInput['scripted']?.['pgWriteCommits'] ?? null, met: null },
      ],
    });
  } finally {
    await sessionRows.end();
    await producerProcess.close();
    await fake.close();
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
    await db.drop();
    await cleanupAll();
  }
}

/** The sessions `<prefix>-0 … <prefix>-<count-1>`, alternately on agent alpha and beta. */
async function createAgentSessions(pool: pg.Pool, prefix: string, count: number): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const agents = ids.map((_, i) => TWO_AGENTS[i % TWO_AGENTS.length]!.name);
  await pool.query('INSERT INTO sessions (id, agent) SELECT * FROM unnest($1::text[], $2::text[])', [ids, agents]);
}

await main();
