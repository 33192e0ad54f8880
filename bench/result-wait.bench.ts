/**
 * What waiting for results costs a producer: the standard input (scripted, one in-process worker)
 * in a closed loop per session — add, wait until the input finished, add the next — over 200
 * sessions, the way an API server answers each request with its input's outcome:
 * - `result`: the wait is `handle.result()`, the product's API (the subscription to the session's
 *   finish announcements, a Postgres read, the announcement);
 * - floor `committed`: the wait ends when this process sees the input's final step commit (the
 *   worker's store, wrapped in-process): what a producer would pay for knowing at no cost.
 * The producer is a `SessionQueue` in this process, beside the worker, so the two variants differ in
 * the result waits alone; they alternate, after one unmeasured round of each. Reported per variant
 * (medians): inputs/s, CPU per input by process, Redis connections opened and Redis commands sent
 * per input (this process, client side).
 *
 * Run alone: `node --max-semi-space-size=32 --import tsx bench/result-wait.bench.ts` (BENCH_INPUTS
 * per run, default 1000; BENCH_RUNS, default 3).
 */
import { Redis } from 'ioredis';
import type { SessionStore } from '../src/core/ports/session-store.js';
import { SessionQueue } from '../src/producer/session-queue.js';
import { afterCommitStep, benchConfig, closeFleetBench, countRedisCommands, createBenchDatabase, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { cpuPerItem, cpuSnapshot } from './lib/process-cpu.js';
import { deadline, median, pool, report, round } from './lib/stats.js';

const N = Number(process.env.BENCH_INPUTS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SESSIONS = 200;
const CONCURRENCY = 128;
/** Inputs per session in a run, one after another; a run has this many times SESSIONS inputs. */
const PER_SESSION = Math.ceil(N / SESSIONS);
const INPUTS = PER_SESSION * SESSIONS;

type Variant = 'committed' | 'result';

/** Resolves a wait when the worker commits the input's final step, seen in this process. */
class CommittedInputs {
  readonly #waiters = new Map<string, () => void>();
  readonly #done = new Set<string>();

  readonly wrapStore = (store: SessionStore): SessionStore =>
    afterCommitStep(store, (step) => {
      if (step.input !== undefined) this.#finished(`${step.sessionId}#${step.input.seq}`);
    });

  wait(sessionId: string, seq: number): Promise<void> {
    const key = `${sessionId}#${seq}`;
    if (this.#done.delete(key)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.set(key, resolve));
  }

  #finished(key: string): void {
    const waiter = this.#waiters.get(key);
    if (waiter === undefined) this.#done.add(key);
    else {
      this.#waiters.delete(key);
      waiter();
    }
  }
}

async function connectionsReceived(redis: Redis): Promise<number> {
  return Number(/total_connections_received:(\d+)/.exec(await redis.info('stats'))?.[1] ?? Number.NaN);
}

async function main(): Promise<void> {
  const stop = deadline(240_000, 'result-wait bench');
  const db = await createBenchDatabase('rwait');
  const queueName = uniqueName('rwait');
  const redis = new Redis(REDIS_URL);
  const committed = new CommittedInputs();
  const worker = await startBenchWorker(benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY) }), {
    wrapStore: committed.wrapStore,
    llm: new StandardScriptedLlm(),
  });
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const runs: Record<Variant, { ms: number; cpu: Record<string, number | null>; connectionsPerInput: number; commandsPerInput: number }[]> = { committed: [], result: [] };
  try {
    const run = async (variant: Variant, label: string): Promise<(typeof runs)[Variant][number]> => {
      const commands = countRedisCommands();
      const connections = await connectionsReceived(redis);
      const cpu = cpuSnapshot();
      const started = performance.now();
      await pool(Array.from({ length: SESSIONS }, (_, i) => `${label}-${i}`), SESSIONS, async (sessionId) => {
        for (let k = 0; k < PER_SESSION; k += 1) {
          const handle = await producer.add('send', { sessionId, input: `standard input ${k}: please call noop` });
          if (variant === 'result') {
            const outcome = await handle.result({ timeoutMs: 60_000 });
            if (outcome.status !== 'completed') throw new Error(`input ${sessionId}#${handle.seq} ended ${outcome.status}`);
          } else {
            await committed.wait(sessionId, handle.seq);
          }
        }
      });
      const ms = performance.now() - started;
      const sent = Object.values(commands.read()).reduce((a, b) => a + b, 0);
      commands.restore();
      // INFO goes out on the bench's own connection, already open: it adds nothing to the count.
      const opened = (await connectionsReceived(redis)) - connections;
      return { ms, cpu: cpuPerItem(cpu, cpuSnapshot(), INPUTS), connectionsPerInput: round(opened / INPUTS, 3), commandsPerInput: round(sent / INPUTS, 2) };
    };
    for (let pass = 0; pass <= RUNS; pass += 1) {
      // Alternating, the first of each round switching, so neither always runs on a warmer process.
      const order: Variant[] = pass % 2 === 0 ? ['committed', 'result'] : ['result', 'committed'];
      for (const variant of order) {
        const measured = await run(variant, `${variant}-${pass}`);
        if (pass > 0) runs[variant].push(measured);
      }
    }
  } finally {
    await closeFleetBench({ worker, producer, redis, queueName, db });
    stop();
  }
  const summary = (variant: Variant) => {
    const list = runs[variant];
    const cpuOf = (name: string) => round(median(list.map((entry) => entry.cpu[name] ?? Number.NaN)), 2);
    return {
      inputsPerSec: Math.round(median(list.map((entry) => (INPUTS / entry.ms) * 1000))),
      runsMs: list.map((entry) => Math.round(entry.ms)),
      cpuMsPerInput: { node: cpuOf('node'), postgres: cpuOf('postgres'), redis: cpuOf('redis'), machine: cpuOf('machine') },
      redisConnectionsOpenedPerInput: median(list.map((entry) => entry.connectionsPerInput)),
      redisCommandsPerInput: median(list.map((entry) => entry.commandsPerInput)),
    };
  };
  const floor = summary('committed');
  const measured = summary('result');
  await report({
    name: 'result-wait',
    command: 'node --max-semi-space-size=32 --import tsx bench/result-wait.bench.ts',
    runs: RUNS,
    sizes: { inputsPerRun: INPUTS, sessions: SESSIONS, workerConcurrency: CONCURRENCY },
    figures: { result: measured },
    floor: { committed: floor },
    ratio: {
      inputsPerSecVsCommitted: round(measured.inputsPerSec / floor.inputsPerSec, 3),
      // What each wait adds, in ms of CPU: the machine's and this process's (worker and producer together).
      extraMachineCpuMsPerResult: round(measured.cpuMsPerInput.machine - floor.cpuMsPerInput.machine, 2),
      extraNodeCpuMsPerResult: round(measured.cpuMsPerInput.node - floor.cpuMsPerInput.node, 2),
    },
    targets: [],
  });
}

main().catch(async (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
