import type { LeaseAndClaim } from '../core/ports/session-store.js';
import { parkSession, unparkSession, wakeParked } from '../fleet/tenant-parking.js';
import { boundWhileStopping } from './stopping-wait.js';
import type { WorkerContext } from './worker-context.js';

/** The drain's lease attempt, and when it was sent: the lease runs a TTL from no earlier than that. */
export interface LeaseAttempt {
  lease: LeaseAndClaim;
  asked: number;
}

/**
 * Takes the session's lease (and first input), as `acquireLeaseAndClaim`. When its tenant runs as many
 * inputs as its cap allows (docs/tenant-limits.md), parks the session in the tenant's set and then
 * tries once more: a drain of the tenant that released its lease between the count and the park found
 * no one to wake, and this second look sees the slot it freed. Still at the cap, the answer is
 * `atCap`, the session stays parked, and the next release of the tenant wakes it (the sweeper, should
 * that wake-up be lost). A tenant without a cap never gets here past the first call.
 */
export async function takeLeaseOrPark(ctx: WorkerContext, sessionId: string): Promise<LeaseAttempt> {
  // Its own queue's sessions only: another queue's kick (a forged job) must not run theirs here.
  const params = { sessionId, owner: ctx.workerId, ttlMs: ctx.settings.leaseTtlMs, queue: ctx.queueName };
  const asked = Date.now();
  const lease = await ctx.store.acquireLeaseAndClaim(params);
  if (lease.acquired || lease.atCap === undefined) return { lease, asked };
  const { tenant } = lease.atCap;
  await parkSession(ctx.redis, ctx.queueName, tenant, sessionId, ctx.clock.now());
  const again = Date.now();
  const retried = await ctx.store.acquireLeaseAndClaim(Object.assign({}, params, { cappedTenant: tenant }));
  if (retried.acquired) {
    // Left in the set, it would only bring a kick that finds nothing to do.
    await unparkSession(ctx.redis, ctx.queueName, tenant, sessionId).catch((error: unknown) =>
      ctx.logger.warn({ err: error, sessionId, tenant }, 'could not take a session out of its parked set; a later wake-up kicks it for nothing'),
    );
  }
  return { lease: retried, asked: again };
}

/**
 * A drain that held a slot of a capped tenant released it: wake the tenant's longest-parked session.
 * Never throws: a lost wake-up is repaired by the sweeper, which kicks parked sessions of tenants
 * below their cap.
 */
export async function wakeOneParked(ctx: WorkerContext, tenant: string): Promise<void> {
  // Bounded while stopping, like the drain's other Redis waits: a silent Redis must not hold shutdown.
  await boundWhileStopping(ctx, wakeParked(ctx.redis, { queue: ctx.queue, fair: ctx.fair }, ctx.queueName, tenant), 'parked wake-up').catch((error: unknown) =>
    ctx.logger.warn({ err: error, tenant }, 'could not wake a parked session of the tenant; the sweeper will'),
  );
}
