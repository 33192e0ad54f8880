/**
 * What a child session adds (docs/child-sessions.md): an input whose model starts one sub-agent and
 * waits for its answer, against the same input with a plain tool call instead, in the same run, one
 * in-process worker, zero-latency scripted model. The worker serves two agents: `lead` (the built-in
 * `current_time`, `subagents: ['reader']`) and `reader` (answers at once). Each input goes to `lead`:
 * - `tool` (the baseline): the model calls `current_time`, then answers;
 * - `spawn`: the model calls `spawn_agent` (`wait: true`); the child answers in one reply; the
 *   parent parks, is woken by the delivery, and answers;
 * - `spawn4`: four `spawn_agent` calls in one reply; the parent wakes once, all four answered.
 * Per workload and run:
 * - latency: `BENCH_SPAWN_SEQUENTIAL` inputs one at a time, each to a new session, timed from
 *   `add()` called to `handle.result()` resolved (the `input_finished` announcement, then the
 *   outcome read), so it measures the path, not the throughput; Postgres statements and durable
 *   commits and Redis commands sent per input, counted client side (this process: worker and producer);
 * - throughput: `BENCH_SPAWN_SESSIONS` sessions in flight, each a closed loop of
 *   `BENCH_SPAWN_PER_SESSION` inputs (add, wait for the input's final step commit seen in this
 *   process, add the next).
 * The workloads alternate (tool, spawn, spawn4, then the next round rotated), after one unmeasured
 * round; figures are medians over the rounds. Added cost: spawn − tool (ms at p50, statements and
 * commits per input) and spawn / tool. Last, one input of each workload is traced alone: the store
 * calls in order with their times, and the statements and Redis commands they sent (`trace`).
 *
 * Run alone: `node --max-semi-space-size=32 --import tsx bench/spawn.bench.ts` (BENCH_RUNS, default 4;
 * BENCH_SPAWN_SEQUENTIAL, default 40, so p99 is a run's slowest input; BENCH_SPAWN_SESSIONS, default
 * 32; BENCH_SPAWN_PER_SESSION, default 6). About 70 s; bounded at 115 s.
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import type { AgentDefinition } from '../src/agents/index.js';
import type { LlmCallOptions, LlmRequest, LlmResponse } from '../src/core/ports/llm.js';
import type { SessionStore } from '../src/core/ports/session-store.js';
import { contentText } from '../src/core/messages.js';
import { ScriptedLlm, type ScriptedReply } from '../src/llm/scripted-llm.js';
import { SessionQueue } from '../src/producer/session-queue.js';
import { afterTool, benchConfig, closeFleetBench, countPgStatements, countRedisCommands, createBenchDatabase, REDIS_URL, startBenchWorker, uniqueName } from './lib/fleet.js';
import { deadline, median, percentile, pool, report, round, sleep } from './lib/stats.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 4);
const SEQUENTIAL = Number(process.env.BENCH_SPAWN_SEQUENTIAL ?? 40);
const SESSIONS = Number(process.env.BENCH_SPAWN_SESSIONS ?? 32);
const PER_SESSION = Number(process.env.BENCH_SPAWN_PER_SESSION ?? 6);
const CONCURRENCY = 128;
const FANOUT = 4;

const WORKLOADS = ['tool', 'spawn', 'spawn4'] as const;
type Workload = (typeof WORKLOADS)[number];

const AGENTS: AgentDefinition[] = [
  { name: 'lead', provider: 'scripted', tools: ['current_time'], subagents: ['reader'], systemPrompt: 'You are the lead.' },
  { name: 'reader', provider: 'scripted', tools: [], systemPrompt: 'You are a reader.' },
];

const usage = { promptTokens: 30, completionTokens: 5 };

/**
 * The scripted model of both agents, decided by the request: a child session (`…:sub:…`) answers at
 * once; the lead answers once its tool results are in, else makes its workload's calls (named in the
 * input's text).
 */
class SpawnBenchLlm extends ScriptedLlm {
  constructor() {
    super([], { whenExhausted: 'error', recordRequests: false });
  }

  override complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    this.push((req) => SpawnBenchLlm.step(req));
    return super.complete(request, options);
  }

  static step(request: LlmRequest): ScriptedReply {
    if (request.sessionId.includes(':sub:')) return { text: 'The part says: forty-two.', usage };
    if (afterTool(request.messages)) return { text: 'Done: forty-two.', usage };
    const last = request.messages.at(-1);
    const text = last === undefined ? '' : contentText(last.content);
    const workload = /workload=(\w+)/.exec(text)?.[1];
    if (workload === 'tool') return { toolCalls: [{ name: 'current_time', arguments: {} }], usage };
    const children = workload === 'spawn4' ? FANOUT : 1;
    return { toolCalls: Array.from({ length: children }, (_, i) => ({ name: 'spawn_agent', arguments: { agent: 'reader', task: `read part ${i + 1}`, wait: true } })), usage };
  }
}

/** Resolves a wait when the worker commits the input's final step (seen in this process: no load added). */
class CommittedInputs {
  readonly #waiters = new Map<string, () => void>();
  readonly #done = new Set<string>();

  observe(sessionId: string, seq: number): void {
    const key = `${sessionId}#${seq}`;
    const waiter = this.#waiters.get(key);
    if (waiter === undefined) this.#done.add(key);
    else {
      this.#waiters.delete(key);
      waiter();
    }
  }

  wait(sessionId: string, seq: number, timeoutMs: number): Promise<void> {
    const key = `${sessionId}#${seq}`;
    if (this.#done.delete(key)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`spawn bench: ${key} not finished after ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.set(key, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** One store call seen while tracing: which, for whom, when (ms from the add) and how long. */
interface TracedCall {
  at: number;
  ms: number;
  call: string;
  session: 'parent' | 'child' | 'other';
}

/** Wraps the worker's store: terminal step commits go to `committed`; while `tracing`, every call is timed. */
class StoreObserver {
  readonly committed = new CommittedInputs();
  tracing: { parent: string; t0: number; calls: TracedCall[] } | null = null;

  readonly wrapStore = (store: SessionStore): SessionStore =>
    new Proxy(store, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        const fn = value as (...args: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          const trace = this.tracing;
          const started = performance.now();
          const result = await fn.apply(target, args);
          if (prop === 'commitStep') {
            const step = args[0] as { sessionId: string; input?: { seq: number } };
            if (step.input !== undefined) this.committed.observe(step.sessionId, step.input.seq);
          }
          if (trace !== null) {
            const session = sessionOf(args[0]);
            const kind = session === trace.parent ? 'parent' : session?.startsWith(`${trace.parent}:sub:`) === true ? 'child' : 'other';
            trace.calls.push({ at: round(started - trace.t0, 2), ms: round(performance.now() - started, 2), call: String(prop), session: kind });
          }
          return result;
        };
      },
    });
}

function sessionOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (typeof arg !== 'object' || arg === null) return undefined;
  const params = arg as { sessionId?: unknown; parentSessionId?: unknown };
  const id = params.parentSessionId ?? params.sessionId;
  return typeof id === 'string' ? id : undefined;
}

/** Records the label of every statement sent by this process's pg clients (its name, or its text's start). */
function recordStatements(): { read: () => string[]; restore: () => void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const labels: string[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; name?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    labels.push(typeof first === 'object' && first.name !== undefined ? first.name : text.replace(/\s+/g, ' ').trim().slice(0, 90));
    return original.apply(this, args);
  };
  return { read: () => [...labels], restore: () => void (proto.query = original) };
}

const input = (workload: Workload, i: number) => `workload=${workload} input ${i}`;

interface LatencyRun {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  pgStatementsPerInput: number;
  pgWriteCommitsPerInput: number;
  pgReadOnlyPerInput: number;
  redisCommandsPerInput: number;
}

async function main(): Promise<void> {
  const stop = deadline(115_000, 'spawn bench');
  const db = await createBenchDatabase('spawn');
  const queueName = uniqueName('spawn');
  const redis = new Redis(REDIS_URL);
  const observer = new StoreObserver();
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY) });
  const worker = await startBenchWorker(config, { agents: AGENTS, llm: new SpawnBenchLlm(), wrapStore: observer.wrapStore });
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const latency: Record<Workload, LatencyRun[]> = { tool: [], spawn: [], spawn4: [] };
  const throughput: Record<Workload, number[]> = { tool: [], spawn: [], spawn4: [] };
  const failures: Record<string, number> = {};
  let trace: Record<Workload, Trace> | null = null;
  try {
    const sequential = async (workload: Workload, label: string): Promise<LatencyRun> => {
      const times: number[] = [];
      const statements = countPgStatements();
      const commands = countRedisCommands();
      try {
        for (let i = 0; i < SEQUENTIAL; i += 1) {
          const started = performance.now();
          const handle = await producer.add('send', { sessionId: `${label}-${i}`, agent: 'lead', input: input(workload, i) });
          const outcome = await handle.result({ timeoutMs: 30_000 });
          times.push(performance.now() - started);
          if (outcome.status !== 'completed') failures[workload] = (failures[workload] ?? 0) + 1;
        }
      } finally {
        statements.restore();
        commands.restore();
      }
      const pgCounts = statements.read();
      const sent = Object.values(commands.read()).reduce((a, b) => a + b, 0);
      const per = (count: number) => round(count / SEQUENTIAL, 2);
      return {
        p50: round(percentile(times, 50), 2),
        p95: round(percentile(times, 95), 2),
        p99: round(percentile(times, 99), 2),
        mean: round(times.reduce((a, b) => a + b, 0) / times.length, 2),
        pgStatementsPerInput: per(pgCounts.statements),
        pgWriteCommitsPerInput: per(pgCounts.writeCommits),
        pgReadOnlyPerInput: per(pgCounts.readOnly),
        redisCommandsPerInput: per(sent),
      };
    };
    const closedLoop = async (workload: Workload, label: string): Promise<number> => {
      const started = performance.now();
      await pool(Array.from({ length: SESSIONS }, (_, s) => `${label}-${s}`), SESSIONS, async (sessionId) => {
        for (let k = 0; k < PER_SESSION; k += 1) {
          const handle = await producer.add('send', { sessionId, agent: 'lead', input: input(workload, k) });
          await observer.committed.wait(sessionId, handle.seq, 60_000);
        }
      });
      return ((SESSIONS * PER_SESSION) / (performance.now() - started)) * 1000;
    };
    for (let round_ = 0; round_ <= RUNS; round_ += 1) {
      const measure = round_ > 0;
      // Rotated each round, so no workload always runs first (on a colder or warmer process).
      const order = [...WORKLOADS.slice(round_ % WORKLOADS.length), ...WORKLOADS.slice(0, round_ % WORKLOADS.length)];
      for (const workload of order) {
        const lat = await sequential(workload, `${workload}-r${round_}-seq`);
        const rate = await closedLoop(workload, `${workload}-r${round_}-tput`);
        if (!measure) continue;
        latency[workload].push(lat);
        throughput[workload].push(rate);
      }
    }
    // The closed loops' last lease releases and kicks are over before the traces start.
    await sleep(300);
    trace = Object.fromEntries(await serial(WORKLOADS, async (workload) => [workload, await traceMedian(producer, observer, workload)])) as Record<Workload, Trace>;
  } finally {
    await closeFleetBench({ worker, producer, redis, queueName, db });
    stop();
  }
  const summarize = (workload: Workload) => {
    const runs = latency[workload];
    const med = (pick: (run: LatencyRun) => number) => round(median(runs.map(pick)), 2);
    return {
      latencyMs: { p50: med((r) => r.p50), p95: med((r) => r.p95), p99: med((r) => r.p99), mean: med((r) => r.mean) },
      inputsPerSec: Math.round(median(throughput[workload])),
      perInput: {
        pgStatements: med((r) => r.pgStatementsPerInput),
        pgWriteCommits: med((r) => r.pgWriteCommitsPerInput),
        pgReadOnly: med((r) => r.pgReadOnlyPerInput),
        redisCommandsSent: med((r) => r.redisCommandsPerInput),
      },
      runs: runs.map((run, i) => ({ p50: run.p50, p99: run.p99, inputsPerSec: Math.round(throughput[workload][i]!) })),
    };
  };
  const figures = Object.fromEntries(WORKLOADS.map((workload) => [workload, summarize(workload)])) as Record<Workload, ReturnType<typeof summarize>>;
  const { tool, spawn, spawn4 } = figures;
  const added = (of: typeof spawn) => ({
    p50Ms: round(of.latencyMs.p50 - tool.latencyMs.p50, 2),
    // The same, paired: the median over the rounds of each round's difference (drift cancels within a round).
    p50MsPaired: round(median(of.runs.map((run, i) => run.p50 - tool.runs[i]!.p50)), 2),
    p99Ms: round(of.latencyMs.p99 - tool.latencyMs.p99, 2),
    pgStatementsPerInput: round(of.perInput.pgStatements - tool.perInput.pgStatements, 2),
    pgWriteCommitsPerInput: round(of.perInput.pgWriteCommits - tool.perInput.pgWriteCommits, 2),
    redisCommandsPerInput: round(of.perInput.redisCommandsSent - tool.perInput.redisCommandsSent, 2),
  });
  await report({
    name: 'spawn',
    command: 'node --max-semi-space-size=32 --import tsx bench/spawn.bench.ts',
    runs: RUNS,
    sizes: { sequentialInputsPerRun: SEQUENTIAL, sessionsInFlight: SESSIONS, inputsPerSession: PER_SESSION, workerConcurrency: CONCURRENCY, warmupRounds: 1, childrenInSpawn4: FANOUT },
    figures,
    notCompleted: failures,
    added: { spawn: added(spawn), spawn4: added(spawn4) },
    ratio: {
      spawnVsToolP50: round(spawn.latencyMs.p50 / tool.latencyMs.p50, 3),
      spawn4VsToolP50: round(spawn4.latencyMs.p50 / tool.latencyMs.p50, 3),
      spawnVsToolInputsPerSec: round(spawn.inputsPerSec / tool.inputsPerSec, 3),
      spawn4VsToolInputsPerSec: round(spawn4.inputsPerSec / tool.inputsPerSec, 3),
    },
    trace,
    // No absolute target: what a spawn adds is reported against the plain tool call of the same run.
    targets: [
      { target: 'none: spawn / tool p50 latency, same run (report)', value: round(spawn.latencyMs.p50 / tool.latencyMs.p50, 3), met: null },
      { target: 'none: spawn − tool p50 latency, ms (report)', value: round(spawn.latencyMs.p50 - tool.latencyMs.p50, 2), met: null },
      { target: `none: spawn / tool inputs/s, ${SESSIONS} sessions in flight (report)`, value: round(spawn.inputsPerSec / tool.inputsPerSec, 3), met: null },
    ],
  });
}

async function serial<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await fn(item));
  return out;
}

const TRACES = 5;

/** {@link traceOne} {@link TRACES} times, one after another; the trace of median time. */
async function traceMedian(producer: SessionQueue, observer: StoreObserver, workload: Workload): Promise<Trace> {
  const traces: Trace[] = [];
  for (let i = 0; i < TRACES; i += 1) traces.push(await traceOne(producer, observer, workload, `trace-${workload}-${i}`));
  const sorted = [...traces].sort((a, b) => a.ms - b.ms);
  return Object.assign({ of: TRACES, allMs: traces.map((entry) => entry.ms) }, sorted[Math.floor(sorted.length / 2)]!);
}

interface Trace {
  ms: number;
  storeCalls: TracedCall[];
  otherStoreCalls: number;
  pg: unknown;
  statements: Record<string, number>;
  redis: Record<string, number>;
}

/**
 * One input of `workload` alone, on a new session: the store calls for it and its children in order
 * (ms from the add), and the statements and Redis commands this process sent meanwhile.
 */
async function traceOne(producer: SessionQueue, observer: StoreObserver, workload: Workload, sessionId: string): Promise<Trace> {
  const statements = recordStatements();
  const commands = countRedisCommands();
  const counts = countPgStatements();
  const t0 = performance.now();
  observer.tracing = { parent: sessionId, t0, calls: [] };
  let ms: number;
  try {
    const handle = await producer.add('send', { sessionId, agent: 'lead', input: input(workload, 0) });
    await handle.result({ timeoutMs: 30_000 });
    ms = performance.now() - t0;
  } finally {
    // In the reverse order of the wraps: each restores the one below it.
    counts.restore();
    commands.restore();
    statements.restore();
  }
  const calls = observer.tracing.calls;
  observer.tracing = null;
  const byLabel: Record<string, number> = {};
  for (const label of statements.read()) byLabel[label] = (byLabel[label] ?? 0) + 1;
  return {
    ms: round(ms, 2),
    storeCalls: calls.filter((call) => call.session !== 'other'),
    otherStoreCalls: calls.filter((call) => call.session === 'other').length,
    pg: counts.read(),
    statements: Object.fromEntries(Object.entries(byLabel).sort((a, b) => b[1] - a[1])),
    redis: commands.read(),
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
