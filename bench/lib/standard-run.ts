/**
 * One throughput run of the standard input against an in-process worker: `n` inputs over `sessions`
 * sessions submitted through the real producer (`SessionQueue.add`, `producerConcurrency` in flight) —
 * in this process, or in a producer process of its own (`producer-process.ts`) as a producer service
 * would be — timed from the first add until the last input's final step committed (with `subscribe`,
 * and its `input_finished` was received by the producer process's subscribers).
 */
import { SessionQueue } from '../../src/producer/session-queue.js';
import type { FinishCounter } from './fleet.js';
import { pool } from './stats.js';

/** A run's adds: input `i` of `n` goes to session `<prefix>-<i % sessions>`, `concurrency` adds in flight. */
export interface StandardInputBatch {
  n: number;
  sessions: number;
  prefix: string;
  concurrency: number;
  /**
   * Subscribe to every session's stream while the batch runs (`StreamWatcher`, one subscriber per
   * session, as the latency bench's clients are) and resolve once each input's `input_finished` was
   * received: the batch then carries its clients' reading, as the latency bench's open loops do.
   */
  subscribe?: boolean;
}

/**
 * A producer that makes a batch's adds elsewhere (another process) and resolves once every add
 * resolved, with what it reports about them (`Result`: the producer process's command counts).
 */
export interface StandardInputProducer<Result> {
  addStandardInputs(batch: StandardInputBatch): Promise<Result>;
}

/** The batch's adds through `queue`, the real producer API; rejects with the first add that failed. */
export async function addStandardInputs(queue: SessionQueue, batch: StandardInputBatch): Promise<void> {
  await pool(Array.from({ length: batch.n }, (_, i) => i), batch.concurrency, async (i) => {
    await queue.add('send', { sessionId: `${batch.prefix}-${i % batch.sessions}`, input: `standard input ${i}: please call noop` });
  });
}

export interface StandardRunOptions<Result> {
  /** A `SessionQueue` adds in this process; a `StandardInputProducer` wherever it runs. */
  producer: SessionQueue | StandardInputProducer<Result>;
  counter: FinishCounter;
  n: number;
  sessions: number;
  producerConcurrency: number;
  /** Session id prefix, unique per run (fresh sessions each run). */
  prefix: string;
  timeoutMs: number;
  /** See {@link StandardInputBatch.subscribe}; for a producer process only. */
  subscribe?: boolean;
}

export interface StandardRunResult<Result> {
  ms: number;
  finished: Record<string, number>;
  /** What a `StandardInputProducer` resolved with; undefined for a `SessionQueue`. */
  produced: Result | undefined;
}

export async function standardRun<Result = undefined>(options: StandardRunOptions<Result>): Promise<StandardRunResult<Result>> {
  const { producer, counter, n } = options;
  const batch: StandardInputBatch = { n, sessions: options.sessions, prefix: options.prefix, concurrency: options.producerConcurrency, subscribe: options.subscribe === true };
  if (batch.subscribe && producer instanceof SessionQueue) throw new Error('standardRun: subscribe needs a producer process (its clients read the streams there)');
  const before = counter.finished;
  const beforeStatus = { ...counter.byStatus };
  let produced: Result | undefined;
  // The clock starts as the first add is sent (for a producer process: as its command is written).
  const started = performance.now();
  const allFinished = counter.waitFor(before + n, options.timeoutMs);
  if (producer instanceof SessionQueue) await addStandardInputs(producer, batch);
  else produced = await producer.addStandardInputs(batch);
  await allFinished;
  const ms = performance.now() - started;
  const finished: Record<string, number> = {};
  for (const [status, count] of Object.entries(counter.byStatus)) {
    const delta = count - (beforeStatus[status] ?? 0);
    if (delta > 0) finished[status] = delta;
  }
  return { ms, finished, produced };
}
