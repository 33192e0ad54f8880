/**
 * Latency of the standard input (scripted provider, zero-latency model), one in-process worker, as a
 * client sees it on the session streams, at 50 % and 90 % of the saturation rate measured first in
 * the same run (closed loop, as in the throughput bench). Open-loop arrivals at a fixed rate over
 * SESSIONS sessions (round robin, so inputs rarely queue behind one of their own session):
 * - dispatch: `add()` called → `input_started` received;
 * - fan-out: the model emitted a delta (time stamped in its text) → the subscriber received it; the
 *   publisher coalesces deltas for up to LOOPFLEET_EVENTS_COALESCE_MS (25 ms), so that is the floor;
 * - end-to-end: `add()` called → `input_finished` received.
 * The subscriber is one `XREAD BLOCK` over all session streams, in this process.
 *
 * Each level runs BENCH_LATENCY_RUNS times (default 3); each percentile is the median over the runs.
 *
 * Run alone: `npx tsx bench/latency.bench.ts` (BENCH_LATENCY_SECONDS per load level, default 6; BENCH_SATURATION_INPUTS, default 600;
 * BENCH_SATURATION_RATE to take the levels of a given rate instead of the measured one).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { SessionQueue } from '../src/producer/session-queue.js';
import { benchConfig, closeFleetBench, createBenchDatabase, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { standardRun } from './lib/standard-run.js';
import { deadline, median, percentile, report, round, sleep } from './lib/stats.js';
import { StreamWatcher } from './lib/stream-watcher.js';

const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 6);
const SATURATION_INPUTS = Number(process.env.BENCH_SATURATION_INPUTS ?? 600);
const FIXED_SATURATION = process.env.BENCH_SATURATION_RATE === undefined ? undefined : Number(process.env.BENCH_SATURATION_RATE);
const SESSIONS = 200;
/** Open-loop runs per load level; percentiles are medians over them. */
const RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 3);
const CONCURRENCY = 128;
const COALESCE_MS = 25;

interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

interface Level {
  load: number;
  rate: number;
  inputs: number;
  /** `add()` called → `input_accepted` received: the accept commit and the event, before any worker. */
  acceptedMs: Percentiles;
  dispatchMs: Percentiles;
  fanoutMs: Percentiles;
  endToEndMs: Percentiles;
  /** Delay of this process's event loop (producer, worker and subscriber share it) during the run. */
  eventLoopDelayMs: Percentiles;
  /** p99s of each run (the figures above are medians over them). */
  runs?: { dispatchP99: number; fanoutP99: number; endToEndP99: number }[];
}

async function openLoop(producer: SessionQueue, redis: Redis, queueName: string, counter: FinishCounter, prefix: string, rate: number): Promise<Omit<Level, 'load' | 'rate'>> {
  const sessionIds = Array.from({ length: SESSIONS }, (_, i) => `${prefix}-${i}`);
  const watcher = new StreamWatcher(redis, queueName, sessionIds);
  watcher.start();
  // The producer, the worker and the subscriber share this event loop: its delays are part of every figure.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const total = Math.max(20, Math.round(rate * SECONDS));
  const before = counter.finished;
  const addedAt = new Map<string, number>();
  const adds: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const sessionId = sessionIds[i % SESSIONS]!;
    const t0 = performance.now();
    adds.push(producer.add('send', { sessionId, input: `latency input ${i}` }).then((handle) => void addedAt.set(`${sessionId}#${handle.seq}`, t0)));
  }
  await Promise.all(adds);
  await counter.waitFor(before + total, 120_000);
  await sleep(200);
  await watcher.stop();
  loopDelay.disable();
  const dispatch: number[] = [];
  const accepted: number[] = [];
  const fanout: number[] = [];
  const endToEnd: number[] = [];
  for (const event of watcher.events) {
    const key = `${event.sessionId}#${String(event.data['inputSeq'])}`;
    const t0 = addedAt.get(key);
    if (event.type === 'input_started' && t0 !== undefined) dispatch.push(event.at - t0);
    if (event.type === 'input_accepted' && t0 !== undefined) accepted.push(event.at - t0);
    if (event.type === 'input_finished' && t0 !== undefined) endToEnd.push(event.at - t0);
    if (event.type === 'stream_delta') {
      for (const match of String(event.data['text']).matchAll(/\[(\d+\.\d+)\]/g)) fanout.push(event.at - Number(match[1]));
    }
  }
  const p = (values: number[]) => ({ p50: round(percentile(values, 50), 2), p90: round(percentile(values, 90), 2), p99: round(percentile(values, 99), 2), max: round(Math.max(...values), 2) });
  const ns = (value: number) => round(value / 1e6, 2);
  const eventLoopDelayMs = { p50: ns(loopDelay.percentile(50)), p90: ns(loopDelay.percentile(90)), p99: ns(loopDelay.percentile(99)), max: ns(loopDelay.max) };
  return { inputs: total, acceptedMs: p(accepted), dispatchMs: p(dispatch), fanoutMs: p(fanout), endToEndMs: p(endToEnd), eventLoopDelayMs };
}

async function main(): Promise<void> {
  const stop = deadline(300_000, 'latency bench');
  const db = await createBenchDatabase('lat');
  const queueName = uniqueName('lat');
  const redis = new Redis(REDIS_URL);
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const counter = new FinishCounter();
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY), LOOPFLEET_EVENTS_COALESCE_MS: String(COALESCE_MS) });
  // Each delta carries the time it was emitted, so the subscriber can time the fan-out.
  const llm = new StandardScriptedLlm({ chunk: () => `[${performance.now().toFixed(3)}]` });
  const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm });
  try {
    await standardRun({ producer, counter, n: 100, sessions: SESSIONS, producerConcurrency: 64, prefix: 'warm', timeoutMs: 60_000 });
    const saturation = await standardRun({ producer, counter, n: SATURATION_INPUTS, sessions: SESSIONS, producerConcurrency: 64, prefix: 'sat', timeoutMs: 90_000 });
    // BENCH_SATURATION_RATE fixes the rate the levels are taken of, to compare settings at the same load.
    const saturationRate = FIXED_SATURATION ?? SATURATION_INPUTS / (saturation.ms / 1000);
    const levels: Level[] = [];
    for (const load of [0.5, 0.9]) {
      const rate = saturationRate * load;
      // Several open-loop runs per level (the machine is noisy): each percentile is the median over them.
      const runs: Omit<Level, 'load' | 'rate'>[] = [];
      for (let run = 0; run < RUNS; run += 1) runs.push(await openLoop(producer, redis, queueName, counter, `l${load * 100}-${run}`, rate));
      const med = (pick: (entry: Omit<Level, 'load' | 'rate'>) => Percentiles): Percentiles => ({
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
        runs: runs.map((entry) => ({ dispatchP99: entry.dispatchMs.p99, fanoutP99: entry.fanoutMs.p99, endToEndP99: entry.endToEndMs.p99 })),
      });
    }
    const half = levels[0]!;
    stop();
    await report({
      name: 'latency',
      command: 'npx tsx bench/latency.bench.ts',
      runs: RUNS,
      sizes: { secondsPerLevel: SECONDS, saturationInputs: SATURATION_INPUTS, sessions: SESSIONS, workerConcurrency: CONCURRENCY, coalesceMs: COALESCE_MS },
      figures: { saturationInputsPerSec: round(saturationRate, 1), levels },
      floor: { coalesceWindowMs: COALESCE_MS },
      ratio: { fanoutP99MinusCoalesceMsAt50: round(half.fanoutMs.p99 - COALESCE_MS, 2) },
      targets: [
        { target: 'dispatch p99 < 10 ms at 50% load', value: half.dispatchMs.p99, met: half.dispatchMs.p99 < 10 },
        { target: `fan-out p99 < 5 ms + coalescing window (${COALESCE_MS} ms) at 50% load`, value: half.fanoutMs.p99, met: half.fanoutMs.p99 < 5 + COALESCE_MS },
      ],
    });
  } finally {
    await closeFleetBench({ worker, producer, redis, queueName, db });
  }
}

await main();
