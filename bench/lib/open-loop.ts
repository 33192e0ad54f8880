/**
 * The latency bench's client side: open-loop arrivals of the standard input at a fixed rate over
 * `sessions` sessions (round robin, so inputs rarely queue behind one of their own session), made
 * through the real producer (`SessionQueue.add`), and one subscriber (`XREAD BLOCK` over every
 * session stream) timing what a client sees:
 * - accepted: `add()` called → `input_accepted` received (the accept commit and the event);
 * - dispatch: `add()` called → `input_started` received;
 * - fan-out: the model emitted a delta (the worker stamps `[<monotonicMs>]` in its text) → received;
 * - end-to-end: `add()` called → `input_finished` received.
 * It runs in the producer process (`producer-process.ts`), as clients run apart from the worker, so
 * neither its adds nor its stream reading wait on the worker's event loop; every time is on
 * `monotonicMs`, the machine's one clock, so the worker's delta stamps compare with it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { SessionQueue } from '../../src/producer/session-queue.js';
import { monotonicMs, percentile, round, sleep } from './stats.js';
import { StreamWatcher, waitForEvents } from './stream-watcher.js';

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface OpenLoopPlan {
  redisUrl: string;
  queueName: string;
  /** Session ids are `<prefix>-<i>`; fresh per run. */
  prefix: string;
  sessions: number;
  /** Inputs per second. */
  rate: number;
  /** Inputs in all (at least 20). */
  total: number;
  /** Longest wait for every input's `input_finished` after the last add. */
  timeoutMs: number;
}

export interface OpenLoopResult {
  inputs: number;
  acceptedMs: Percentiles;
  dispatchMs: Percentiles;
  fanoutMs: Percentiles;
  endToEndMs: Percentiles;
  /** Delay of the client's event loop (adds and subscriber) during the run. */
  clientEventLoopDelayMs: Percentiles;
}

/** The regular expression of the worker's delta stamps (`[<monotonicMs>]`). */
const STAMP = /\[(\d+\.\d+)\]/g;

export function deltaStamp(): string {
  return `[${monotonicMs().toFixed(3)}]`;
}

const pct = (values: number[]): Percentiles => ({
  p50: round(percentile(values, 50), 2),
  p90: round(percentile(values, 90), 2),
  p99: round(percentile(values, 99), 2),
  max: round(Math.max(...values), 2),
});

/** Runs the plan through `producer`, waits for every input's `input_finished` on the streams, and times them. */
export async function openLoop(producer: SessionQueue, plan: OpenLoopPlan): Promise<OpenLoopResult> {
  const sessionIds = Array.from({ length: plan.sessions }, (_, i) => `${plan.prefix}-${i}`);
  const redis = new Redis(plan.redisUrl);
  const watcher = new StreamWatcher(redis, plan.queueName, sessionIds, monotonicMs);
  watcher.start();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  try {
    await watcher.ready();
    loopDelay.enable();
    const addedAt = new Map<string, number>();
    const adds: Promise<void>[] = [];
    const started = performance.now();
    for (let i = 0; i < plan.total; i += 1) {
      const wait = started + (i * 1000) / plan.rate - performance.now();
      if (wait > 1) await sleep(wait);
      const sessionId = sessionIds[i % plan.sessions]!;
      const t0 = monotonicMs();
      adds.push(producer.add('send', { sessionId, input: `latency input ${i}` }).then((handle) => void addedAt.set(`${sessionId}#${handle.seq}`, t0)));
    }
    await Promise.all(adds);
    await waitForFinishes(watcher, plan.total, plan.timeoutMs);
    loopDelay.disable();
    const accepted: number[] = [];
    const dispatch: number[] = [];
    const fanout: number[] = [];
    const endToEnd: number[] = [];
    for (const event of watcher.events) {
      const t0 = addedAt.get(`${event.sessionId}#${String(event.data['inputSeq'])}`);
      if (event.type === 'input_accepted' && t0 !== undefined) accepted.push(event.at - t0);
      if (event.type === 'input_started' && t0 !== undefined) dispatch.push(event.at - t0);
      if (event.type === 'input_finished' && t0 !== undefined) endToEnd.push(event.at - t0);
      if (event.type === 'stream_delta') for (const match of String(event.data['text']).matchAll(STAMP)) fanout.push(event.at - Number(match[1]));
    }
    const ns = (value: number) => round(value / 1e6, 2);
    const clientEventLoopDelayMs = { p50: ns(loopDelay.percentile(50)), p90: ns(loopDelay.percentile(90)), p99: ns(loopDelay.percentile(99)), max: ns(loopDelay.max) };
    return { inputs: plan.total, acceptedMs: pct(accepted), dispatchMs: pct(dispatch), fanoutMs: pct(fanout), endToEndMs: pct(endToEnd), clientEventLoopDelayMs };
  } finally {
    loopDelay.disable();
    await watcher.stop();
    redis.disconnect();
  }
}

/** Polls the watcher's events (with a deadline) until `total` inputs finished on the streams. */
export function waitForFinishes(watcher: StreamWatcher, total: number, timeoutMs: number): Promise<void> {
  return waitForEvents(watcher, 'input_finished', total, timeoutMs);
}
