/** BullMQ's highest job priority (`PRIORITY_LIMIT` in bullmq's `Job`): 2^21 − 1. */
export const MAX_JOB_PRIORITY = 2 ** 21 - 1;

/** A tenant's weight when it has no `tenant_settings` row (or the row could not be read). */
export const DEFAULT_TENANT_WEIGHT = 100;

/**
 * The BullMQ priority of a drain that is `rank`-th (1 = first) in its tenant's line of waiting
 * drains: `ceil(rank × 100 / weight)`, within 1..{@link MAX_JOB_PRIORITY}. BullMQ takes the lowest
 * priority first and is FIFO within one, so the first waiting drain of every tenant goes before the
 * second of any: tenants take turns, and a tenant of weight 200 gets two turns per round of one of
 * weight 100.
 */
export function fairPriority(rank: number, weight: number): number {
  const raw = Math.ceil((Math.max(1, rank) * 100) / Math.max(1, weight));
  return Math.min(MAX_JOB_PRIORITY, Math.max(1, raw));
}
