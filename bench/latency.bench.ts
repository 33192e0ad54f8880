/**
 * Latency of the standard input (scripted provider, zero-latency model), one in-process worker, as a
 * client sees it on the session streams, at 50 % and 90 % of the saturation rate measured first in
 * the same run (closed loop, as in the throughput bench, with the client subscribed to every session
 * as it is during the levels; the rate without subscribers is reported beside it). The client —
 * open-loop arrivals at a fixed rate through the real producer, and a subscriber per session stream
 * (`lib/open-loop.ts`, `lib/stream-watcher.ts`) — runs in a process of its own
 * (`lib/producer-process.ts`), as producers and subscribers run apart from the workers in production:
 * this process holds the worker alone. Each run also reports how busy it kept the machine (CPU per
 * input by process, the machine's busy share, the worker's statements and commits per input): group
 * commit amortises less at a fixed rate than in a closed loop, so a level's share of the machine is
 * not its share of the saturation rate. Timed in the client's process, on the machine's
 * one clock (`monotonicMs`):
 * - dispatch: `add()` called → `input_started` received;
 * - fan-out: the model emitted a delta (time stamped in its text by this process) → the subscriber
 *   received it; the publisher coalesces deltas for up to LOOPFLEET_EVENTS_COALESCE_MS (25 ms), so
 *   that is the floor;
 * - end-to-end: `add()` called → `input_finished` received.
 *
 * Each level runs BENCH_LATENCY_RUNS times (default 3); each percentile is the median over the runs.
 *
 * Run alone: `npx tsx bench/latency.bench.ts` (BENCH_LATENCY_SECONDS per load level, default 6; BENCH_SATURATION_INPUTS, default 600;
 * BENCH_SATURATION_RATE to take the levels of a given rate instead of the measured one).
 */
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { benchConfig, closeFleetBench, countPgStatements, createBenchDatabase, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { deltaStamp, type OpenLoopResult, type Percentiles } from './lib/open-loop.js';
import { startProducerProcess, type ProducerProcess, type SessionQueueTarget } from './lib/producer-process.js';
import { cpuPerItem, cpuSnapshot, type CpuPerItem } from './lib/process-cpu.js';
import { standardRun } from './lib/standard-run.js';
import { deadline, median, report, round } from './lib/stats.js';
import { followMode } from './lib/stream-watcher.js';

const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 6);
const SATURATION_INPUTS = Number(process.env.BENCH_SATURATION_INPUTS ?? 600);
const FIXED_SATURATION = process.env.BENCH_SATURATION_RATE === undefined ? undefined : Number(process.env.BENCH_SATURATION_RATE);
const SESSIONS = 200;
/** Open-loop runs per load level; percentiles are medians over them. */
const RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 3);
const CONCURRENCY = 128;
const COALESCE_MS = 25;

type Run = OpenLoopResult & {
  /** Delay of this process's event loop (the worker's) during the run. */
  eventLoopDelayMs: Percentiles;
  /** How busy the run kept the machine: CPU per input by process, and the machine's two cores. */
  load: RunLoad;
};

interface RunLoad {
  /** Milliseconds of CPU per input: the worker (this process), Postgres, Redis, the client process, the machine. */
  cpuMsPerInput: CpuPerItem;
  /** The machine's CPU time over the run's wall time and its cores, in percent (100: every core busy throughout). */
  machineBusyPercent: number | null;
  /** The worker's Postgres statements and durable commits per input, and rows per group-commit statement (counted client side). */
  worker: { statementsPerInput: number; writeCommitsPerInput: number; rowsPerBatchedStatement: number };
}

interface Level extends Omit<Run, 'inputs' | 'load'> {
  load: number;
  rate: number;
  inputs: number;
  /** How busy the machine was (median over the runs): see {@link RunLoad}. */
  machineBusyPercent: number;
  /** p99s and load of each run (the figures above are medians over them). */
  runs: { dispatchP99: number; fanoutP99: number; endToEndP99: number; load: RunLoad }[];
}

/** One open loop in the client process, with this process's event-loop delay measured meanwhile. */
async function openLoop(client: ProducerProcess, target: SessionQueueTarget, prefix: string, rate: number): Promise<Run> {
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const statements = countPgStatements();
  try {
    const cpuBefore = cpuSnapshot({ client: client.pid });
    const started = performance.now();
    const result = await client.openLoop(target, { redisUrl: REDIS_URL, queueName: target.queueName, prefix, sessions: SESSIONS, rate, total: Math.max(20, Math.round(rate * SECONDS)), timeoutMs: 120_000 });
    const wallMs = performance.now() - started;
    const cpuAfter = cpuSnapshot({ client: client.pid });
    const pgCounts = statements.read();
    const machineMs = cpuAfter.machine === null || cpuBefore.machine === null ? null : cpuAfter.machine - cpuBefore.machine;
    const load: RunLoad = {
      cpuMsPerInput: cpuPerItem(cpuBefore, cpuAfter, result.inputs),
      machineBusyPercent: machineMs === null ? null : round((machineMs / (wallMs * availableParallelism())) * 100, 1),
      worker: {
        statementsPerInput: round(pgCounts.statements / result.inputs, 2),
        writeCommitsPerInput: round(pgCounts.writeCommits / result.inputs, 2),
        rowsPerBatchedStatement: round(pgCounts.batchedRows / Math.max(1, pgCounts.batchedStatements), 1),
      },
    };
    const ns = (value: number) => round(value / 1e6, 2);
    return Object.assign(result, { eventLoopDelayMs: { p50: ns(loopDelay.percentile(50)), p90: ns(loopDelay.percentile(90)), p99: ns(loopDelay.percentile(99)), max: ns(loopDelay.max) }, load });
  } finally {
    statements.restore();
    loopDelay.disable();
  }
}

async function main(): Promise<void> {
  const stop = deadline(300_000, 'latency bench');
  const db = await createBenchDatabase('lat');
  const queueName = uniqueName('lat');
  const redis = new Redis(REDIS_URL);
  const client = await startProducerProcess();
  const target = { databaseUrl: db.url, redisUrl: REDIS_URL, queueName };
  const producer = client.sessionQueue(target);
  const counter = new FinishCounter();
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY), LOOPFLEET_EVENTS_COALESCE_MS: String(COALESCE_MS) });
  // Each delta carries the time it was emitted, so the subscriber can time the fan-out.
  const llm = new StandardScriptedLlm({ chunk: deltaStamp });
  const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm });
  try {
    await standardRun({ producer, counter, n: 100, sessions: SESSIONS, producerConcurrency: 64, prefix: 'warm', timeoutMs: 60_000 });
    // Saturation with the client subscribed to every session, as it is during the levels (the
    // subscribers' reads are part of the load); and, for comparison with earlier runs, without.
    const saturation = await standardRun({ producer, counter, n: SATURATION_INPUTS, sessions: SESSIONS, producerConcurrency: 64, prefix: 'sat', timeoutMs: 90_000, subscribe: true });
    const unsubscribed = await standardRun({ producer, counter, n: SATURATION_INPUTS, sessions: SESSIONS, producerConcurrency: 64, prefix: 'sat-bare', timeoutMs: 90_000 });
    const measuredRate = SATURATION_INPUTS / (saturation.ms / 1000);
    // BENCH_SATURATION_RATE fixes the rate the levels are taken of, to compare settings at the same load.
    const saturationRate = FIXED_SATURATION ?? measuredRate;
    const levels: Level[] = [];
    for (const load of [0.5, 0.9]) {
      const rate = saturationRate * load;
      // Several open-loop runs per level (the machine is noisy): each percentile is the median over them.
      const runs: Run[] = [];
      for (let run = 0; run < RUNS; run += 1) runs.push(await openLoop(client, target, `l${load * 100}-${run}`, rate));
      const med = (pick: (entry: Run) => Percentiles): Percentiles => ({
        p50: median(runs.map((entry) => pick(entry).p50)),
        p90: median(runs.map((entry) => pick(entry).p90)),
        p99: median(runs.map((entry) => pick(entry).p99)),
        max: median(runs.map((entry) => pick(entry).max)),
      });
      levels.push({
        load,
        rate: round(rate, 1),
        inputs: runs.reduce((sum, entry) => sum + entry.inputs, 0),
        acceptedMs: med((entry) => entry.acceptedMs),
        dispatchMs: med((entry) => entry.dispatchMs),
        fanoutMs: med((entry) => entry.fanoutMs),
        endToEndMs: med((entry) => entry.endToEndMs),
        eventLoopDelayMs: med((entry) => entry.eventLoopDelayMs),
        clientEventLoopDelayMs: med((entry) => entry.clientEventLoopDelayMs),
        machineBusyPercent: median(runs.map((entry) => entry.load.machineBusyPercent ?? Number.NaN)),
        runs: runs.map((entry) => ({ dispatchP99: entry.dispatchMs.p99, fanoutP99: entry.fanoutMs.p99, endToEndP99: entry.endToEndMs.p99, load: entry.load })),
      });
    }
    const half = levels[0]!;
    stop();
    await report({
      name: 'latency',
      command: 'npx tsx bench/latency.bench.ts',
      runs: RUNS,
      sizes: { client: 'child process', follow: followMode(), secondsPerLevel: SECONDS, saturationInputs: SATURATION_INPUTS, sessions: SESSIONS, workerConcurrency: CONCURRENCY, coalesceMs: COALESCE_MS },
      figures: {
        saturationInputsPerSec: round(saturationRate, 1),
        measuredSaturationInputsPerSec: round(measuredRate, 1),
        saturationWithoutSubscribersInputsPerSec: round(SATURATION_INPUTS / (unsubscribed.ms / 1000), 1),
        levels,
      },
      floor: { coalesceWindowMs: COALESCE_MS },
      ratio: { fanoutP99MinusCoalesceMsAt50: round(half.fanoutMs.p99 - COALESCE_MS, 2) },
      targets: [
        { target: 'dispatch p99 < 10 ms at 50% load', value: half.dispatchMs.p99, met: half.dispatchMs.p99 < 10 },
        { target: `fan-out p99 < 5 ms + coalescing window (${COALESCE_MS} ms) at 50% load`, value: half.fanoutMs.p99, met: half.fanoutMs.p99 < 5 + COALESCE_MS },
      ],
    });
  } finally {
    await closeFleetBench({ worker, producer: client, redis, queueName, db });
  }
}

await main();
