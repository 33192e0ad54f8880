import { fairPriority } from './fair-priority.js';
import { joinFairLine, type LineRedis } from './fair-line.js';
import { drainDedupId, JOB } from './fleet-keys.js';
import type { QueueShards } from './queue-shards.js';

/** The data of a `drain` job. `tenant` is the session's (absent in jobs added before fair dispatch). */
export interface DrainJobData {
  sessionId: string;
  tenant?: string;
}

/**
 * Fair dispatch between tenants (docs/fair-dispatch.md): what a kick needs to give its drain a
 * priority. Absent (`FAIR_DISPATCH=false`, or a caller that never set it): drains go FIFO.
 */
export interface FairDispatch {
  /** The tenant's weight, 1–10000 (a cached read of `tenant_settings`); never rejects. */
  weight(tenant: string): Promise<number>;
  /** The connection the tenants' lines live on: the queue's Redis. */
  redis: LineRedis;
}

/** Where a kick goes: the queues (the session's shard's takes it), and fair dispatch when it is on. */
export interface KickDeps {
  queue: QueueShards;
  fair?: FairDispatch | null;
}

/** The session to wake, with its tenant (a session's tenant never changes). */
export interface KickTarget {
  sessionId: string;
  tenant: string;
}

/**
 * Wakes a session's drain. Deduplicated per session with `keepLastIfActive`: while a drain job is
 * waiting, a kick is absorbed; while one is active, the kick is kept and re-enqueued the moment the
 * active one finishes — so an input that arrives while a drain is finishing is never stranded (race
 * R1 in docs/invariants.md).
 *
 * With fair dispatch the session first joins its tenant's line (one Lua call: ZADD NX, then its
 * rank), and the job's priority is that rank scaled by the tenant's weight: BullMQ takes the lowest
 * priority first, so tenants take turns. An absorbed kick leaves the waiting job's priority as it was
 * (the session was in the line already, at the same place); a kept one carries the priority computed
 * now, which BullMQ stores with it.
 */
export async function kickSession(deps: KickDeps, target: KickTarget): Promise<void> {
  const { fair } = deps;
  const queue = deps.queue.for(target.sessionId);
  const data: DrainJobData = { sessionId: target.sessionId, tenant: target.tenant };
  const options = {
    deduplication: { id: drainDedupId(target.sessionId), keepLastIfActive: true },
    removeOnComplete: true,
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
    attempts: 5,
    backoff: { type: 'exponential' as const, delay: 1000 },
  };
  if (fair === undefined || fair === null) {
    await queue.add(JOB.drain, data, options);
    return;
  }
  const [weight, rank] = await Promise.all([fair.weight(target.tenant), joinFairLine(fair.redis, deps.queue.keyRoot(queue), target.tenant, target.sessionId)]);
  await queue.add(JOB.drain, data, Object.assign({}, options, { priority: fairPriority(rank, weight) }));
}
