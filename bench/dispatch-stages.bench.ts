/**
 * The dispatch path stage by stage (`add()` called → `input_started` received), to say where the
 * latency bench's dispatch time goes: the latency bench's workload (open-loop arrivals at fixed
 * rates, round robin over 200 sessions, so an input rarely finds its session busy), one in-process
 * worker, scripted standard input. Each stage is timed in this process by wrapping, for the run only:
 * - the producer's accept (`PostgresSessionStore.acceptInput`: a shared write statement),
 * - the wait for its `input_accepted` publish (accepted → the kick is called),
 * - the kick (`Queue.add` of the drain job),
 * - BullMQ's delivery (kick called → the drain's lease-and-claim is called),
 * - the lease and first claim (`acquireLeaseAndClaim`: a shared write statement),
 * - the `input_started` write and its arrival at a subscriber (`XREAD BLOCK` in this process).
 * Percentiles per stage over all inputs of a rate; the stages of one input add up to its total.
 * Per-stage percentiles do not add up to the total's, so each rate also reports its tail: the inputs
 * whose total is at or above the total's p99, with each stage's mean among them and how much of their
 * dispatch this process spent in garbage collection (it holds the worker, the producer and the
 * subscriber), beside every collection pause of the rate's window.
 *
 * Run alone: `npx tsx bench/dispatch-stages.bench.ts` (BENCH_DISPATCH_RATES, default "50,200" inputs/s;
 * BENCH_DISPATCH_SECONDS per rate, default 5).
 */
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SessionQueue } from '../src/producer/session-queue.js';
import { PostgresSessionStore } from '../src/store/postgres-session-store.js';
import { benchConfig, closeFleetBench, createBenchDatabase, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { deadline, percentile, report, round, sleep } from './lib/stats.js';
import { StreamWatcher, waitForEvents } from './lib/stream-watcher.js';

const RATES = (process.env.BENCH_DISPATCH_RATES ?? '50,200').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_DISPATCH_SECONDS ?? 5);
const CONCURRENCY = 128;
const SESSIONS = 200;

type Mark = 'add' | 'acceptCall' | 'accepted' | 'kickCall' | 'kicked' | 'leaseCall' | 'leased' | 'startedSeen';

/** The stages, each from one mark to the next; together they span add → input_started seen. */
const STAGES: [name: string, from: Mark, to: Mark][] = [
  ['accept statement', 'add', 'accepted'],
  ['input_accepted publish', 'accepted', 'kickCall'],
  ['kick (BullMQ add)', 'kickCall', 'kicked'],
  ['BullMQ delivery to the drain', 'kicked', 'leaseCall'],
  ['lease + first claim statement', 'leaseCall', 'leased'],
  ['input_started written and received', 'leased', 'startedSeen'],
];

type Marks = Partial<Record<Mark, number>>;

/** A collection pause of this process, on `performance.now()`'s clock. */
interface Pause {
  start: number;
  ms: number;
}

/** Records this process's garbage-collection pauses until `stop()`. */
function watchPauses(): { pauses: Pause[]; stop: () => void } {
  const pauses: Pause[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as PerformanceEntry[]) pauses.push({ start: entry.startTime, ms: entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  return { pauses, stop: () => observer.disconnect() };
}

/** Milliseconds of `pauses` that fell between `from` and `to`. */
function pausedWithin(pauses: readonly Pause[], from: number, to: number): number {
  let ms = 0;
  for (const pause of pauses) ms += Math.max(0, Math.min(pause.start + pause.ms, to) - Math.max(pause.start, from));
  return ms;
}

/**
 * The slowest inputs (total at or above its p99): each stage's mean among them, and the mean time of
 * their dispatch this process spent paused for garbage collection.
 */
function tail(complete: readonly Marks[], pauses: readonly Pause[]) {
  const total = (entry: Marks) => entry.startedSeen! - entry.add!;
  const p99 = percentile(complete.map(total), 99);
  const slow = complete.filter((entry) => total(entry) >= p99);
  const mean = (pick: (entry: Marks) => number) => round(slow.reduce((sum, entry) => sum + pick(entry), 0) / slow.length);
  return {
    inputs: slow.length,
    totalMs: mean(total),
    stagesMs: Object.fromEntries(STAGES.map(([name, from, to]) => [name, mean((entry) => entry[to]! - entry[from]!)])),
    gcPausedMs: mean((entry) => pausedWithin(pauses, entry.add!, entry.startedSeen!)),
  };
}

/**
 * Times each stage by wrapping the prototypes for the run; `restore()` puts them back. `current`
 * holds each session's latest input: a session's inputs come seconds apart, long after the one
 * before was dispatched.
 */
function instrument(current: Map<string, Marks>): { restore: () => void } {
  const mark = (sessionId: string, name: Mark) => {
    const entry = current.get(sessionId);
    if (entry !== undefined && entry[name] === undefined) entry[name] = performance.now();
  };
  const store = PostgresSessionStore.prototype as unknown as Record<'acceptInput' | 'acquireLeaseAndClaim', (params: { sessionId: string }) => Promise<unknown>>;
  const queue = Queue.prototype as unknown as { add: (name: string, data: { sessionId?: string }, opts: unknown) => Promise<unknown> };
  const { acceptInput, acquireLeaseAndClaim } = store;
  const add = queue.add;
  store.acceptInput = async function (params) {
    mark(params.sessionId, 'acceptCall');
    const result = await acceptInput.call(this, params);
    mark(params.sessionId, 'accepted');
    return result;
  };
  store.acquireLeaseAndClaim = async function (params) {
    mark(params.sessionId, 'leaseCall');
    const result = await acquireLeaseAndClaim.call(this, params);
    mark(params.sessionId, 'leased');
    return result;
  };
  queue.add = async function (name, data, opts) {
    const sessionId = name === 'drain' ? data.sessionId : undefined;
    if (sessionId !== undefined) mark(sessionId, 'kickCall');
    const result = await add.call(this, name, data, opts);
    if (sessionId !== undefined) mark(sessionId, 'kicked');
    return result;
  };
  return {
    restore: () => {
      store.acceptInput = acceptInput;
      store.acquireLeaseAndClaim = acquireLeaseAndClaim;
      queue.add = add;
    },
  };
}

async function main(): Promise<void> {
  const stop = deadline(180_000, 'dispatch-stages bench');
  const db = await createBenchDatabase('disp');
  const queueName = uniqueName('disp');
  const redis = new Redis(REDIS_URL);
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const counter = new FinishCounter();
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY) });
  const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm: new StandardScriptedLlm() });
  try {
    // Warm-up: connections, prepared statements, scripts, JIT.
    for (let i = 0; i < 100; i += 1) await producer.add('send', { sessionId: `warm-${i}`, input: 'warm-up' });
    await counter.waitFor(100, 60_000);
    const levels = [];
    for (const rate of RATES) {
      const total = Math.max(20, Math.round(rate * SECONDS));
      const sessionIds = Array.from({ length: SESSIONS }, (_, i) => `r${rate}-${i}`);
      const current = new Map<string, Marks>();
      /** Every input's marks, by `<sessionId>#<seq>` once its add returned. */
      const marks = new Map<string, Marks>();
      const watcher = new StreamWatcher(redis, queueName, sessionIds);
      watcher.start();
      await watcher.ready();
      const instrumented = instrument(current);
      const gc = watchPauses();
      const before = counter.finished;
      const adds: Promise<unknown>[] = [];
      const started = performance.now();
      for (let i = 0; i < total; i += 1) {
        const wait = started + (i * 1000) / rate - performance.now();
        if (wait > 1) await sleep(wait);
        const sessionId = sessionIds[i % SESSIONS]!;
        const entry: Marks = { add: performance.now() };
        current.set(sessionId, entry);
        adds.push(producer.add('send', { sessionId, input: `dispatch input ${i}` }).then((handle) => void marks.set(`${sessionId}#${handle.seq}`, entry)));
      }
      await Promise.all(adds);
      await counter.waitFor(before + total, 60_000);
      instrumented.restore();
      gc.stop();
      // Every input committed its final step, so its `input_started` was written: wait until it was read.
      await waitForEvents(watcher, 'input_started', total, 10_000);
      await watcher.stop();
      for (const event of watcher.events) {
        const entry = marks.get(`${event.sessionId}#${String(event.data['inputSeq'])}`);
        if (entry !== undefined && event.type === 'input_started') entry.startedSeen ??= event.at;
      }
      const complete = [...marks.values()].filter((entry) => STAGES.every(([, from, to]) => entry[from] !== undefined && entry[to] !== undefined));
      const pct = (values: number[]) => ({ p50: round(percentile(values, 50)), p90: round(percentile(values, 90)), p99: round(percentile(values, 99)), max: round(Math.max(...values)) });
      levels.push({
        rate,
        inputs: total,
        timed: complete.length,
        stagesMs: Object.fromEntries(STAGES.map(([name, from, to]) => [name, pct(complete.map((entry) => entry[to]! - entry[from]!))])),
        totalMs: pct(complete.map((entry) => entry.startedSeen! - entry.add!)),
        tail: tail(complete, gc.pauses),
        gcPauses: {
          count: gc.pauses.length,
          ms: round(gc.pauses.reduce((sum, pause) => sum + pause.ms, 0)),
          maxMs: round(Math.max(0, ...gc.pauses.map((pause) => pause.ms))),
          over5ms: gc.pauses.filter((pause) => pause.ms > 5).length,
        },
      });
    }
    stop();
    await report({
      name: 'dispatch-stages',
      command: 'npx tsx bench/dispatch-stages.bench.ts',
      runs: 1,
      sizes: { secondsPerRate: SECONDS, workerConcurrency: CONCURRENCY, sessions: SESSIONS },
      figures: { levels },
      targets: [{ target: 'informational: where dispatch time goes (the target is in latency.json)', value: null, met: null }],
    });
  } finally {
    await closeFleetBench({ worker, producer, redis, queueName, db });
  }
}

await main();
