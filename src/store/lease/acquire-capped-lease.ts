import type pg from 'pg';
import { z } from 'zod';
import type { AcquireLeaseParams, LeaseAndClaim } from '../../core/ports/session-store.js';
import { ACQUIRE_LEASES_AND_CLAIM } from '../inbox/claim-next-input-sql.js';
import { parseRow } from '../rows/parse-row.js';
import { COUNT_TENANT_LEASES_SQL, LOCK_TENANT_CAP_SQL } from './acquire-capped-lease-sql.js';

const capSchema = z.object({ cap: z.number().int().positive().nullable() });
const countSchema = z.object({ running: z.number().int().nonnegative() });

/** The capped take's answer before it is decoded: the lease-and-claim row, none, or the tenant at its cap. */
export type CappedTake = { kind: 'row'; row: Record<string, unknown> | undefined } | { kind: 'at_cap'; limit: number };

/**
 * The lease of a session whose tenant caps its inputs running at once (docs/tenant-limits.md), in one
 * transaction: lock the tenant's settings row, count its sessions holding a live lease, and take the
 * lease (and claim, as {@link ACQUIRE_LEASES_AND_CLAIM}) only below the cap. Takes of one tenant
 * serialise on that row, so the count cannot go over the cap however many workers take at once. A
 * tenant whose cap was removed meanwhile is taken without counting. Four round trips plus the
 * transaction's own, paid only by capped tenants.
 */
export async function takeCappedLease(pool: pg.Pool, params: Required<Pick<AcquireLeaseParams, 'sessionId' | 'owner' | 'ttlMs'>> & Pick<AcquireLeaseParams, 'queue'>, tenant: string): Promise<CappedTake> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const locked = await client.query(LOCK_TENANT_CAP_SQL, [tenant]);
    const cap = locked.rows[0] === undefined ? null : parseRow(capSchema, locked.rows[0], `tenant_settings of ${tenant}`).cap;
    if (cap !== null) {
      const { running } = parseRow(countSchema, (await client.query(COUNT_TENANT_LEASES_SQL, [tenant])).rows[0], `leases of tenant ${tenant}`);
      if (running >= cap) {
        await client.query('ROLLBACK');
        return { kind: 'at_cap', limit: cap };
      }
    }
    const record = JSON.stringify([{ session_id: params.sessionId, owner: params.owner, ttl_ms: params.ttlMs, capped: true, queue: params.queue ?? null }]);
    const taken = await client.query(ACQUIRE_LEASES_AND_CLAIM.text, [record]);
    await client.query('COMMIT');
    return { kind: 'row', row: taken.rows[0] as Record<string, unknown> | undefined };
  } catch (error) {
    // Roll back before the connection goes back to the pool; one that cannot is dropped.
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The answer when the capped take found the tenant at its cap: nothing taken, nothing claimed. */
export function atCap(tenant: string, limit: number): Extract<LeaseAndClaim, { acquired: false }> {
  return { acquired: false, holder: null, retryAfterMs: 0, atCap: { tenant, limit } };
}
