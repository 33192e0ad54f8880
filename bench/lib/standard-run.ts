/**
 * One throughput run of the standard input against an in-process worker: `n` inputs over `sessions`
 * sessions submitted through the real producer (`SessionQueue.add`, `producerConcurrency` in flight),
 * timed from the first add until the last input's final step committed.
 */
import type { SessionQueue } from '../../src/producer/session-queue.js';
import type { FinishCounter } from './fleet.js';
import { pool } from './stats.js';

export interface StandardRunOptions {
  producer: SessionQueue;
  counter: FinishCounter;
  n: number;
  sessions: number;
  producerConcurrency: number;
  /** Session id prefix, unique per run (fresh sessions each run). */
  prefix: string;
  timeoutMs: number;
}

export async function standardRun(options: StandardRunOptions): Promise<{ ms: number; finished: Record<string, number> }> {
  const { producer, counter, n } = options;
  const before = counter.finished;
  const beforeStatus = { ...counter.byStatus };
  const started = performance.now();
  const allFinished = counter.waitFor(before + n, options.timeoutMs);
  await pool(Array.from({ length: n }, (_, i) => i), options.producerConcurrency, async (i) => {
    await producer.add('send', { sessionId: `${options.prefix}-${i % options.sessions}`, input: `standard input ${i}: please call noop` });
  });
  await allFinished;
  const ms = performance.now() - started;
  const finished: Record<string, number> = {};
  for (const [status, count] of Object.entries(counter.byStatus)) {
    const delta = count - (beforeStatus[status] ?? 0);
    if (delta > 0) finished[status] = delta;
  }
  return { ms, finished };
}
