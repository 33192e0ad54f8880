import type { Queue } from 'bullmq';
import { drainDedupId, JOB } from './fleet-keys.js';

/**
 * Wakes a session's drain. Deduplicated per session with `keepLastIfActive`: while a drain job is
 * waiting, a kick is absorbed; while one is active, the kick is kept and re-enqueued (at the tail)
 * the moment the active one finishes — so an input that arrives while a drain is finishing is never
 * stranded (race R1 in docs/invariants.md).
 */
export async function kickSession(queue: Queue, sessionId: string): Promise<void> {
  await queue.add(
    JOB.drain,
    { sessionId },
    {
      deduplication: { id: drainDedupId(sessionId), keepLastIfActive: true },
      removeOnComplete: true,
      removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    },
  );
}
