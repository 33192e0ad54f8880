import { z } from 'zod';
import { LeaseLostError } from '../../core/errors/index.js';
import type { RenewLeaseParams } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertLeaseToken, assertTtlMs } from '../postgres/arguments.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { RENEW_LEASE_SQL } from './renew-lease-sql.js';

const renewedSchema = z.object({ expiresAt: z.date() });

/**
 * The heartbeat: pushes the lease expiry to now + ttl (database clock). Throws `lease.lost` when the
 * token is no longer current (another worker took over) or the lease was released; the caller must
 * then stop working on the session.
 */
export async function renewLease(db: Queryable, params: RenewLeaseParams): Promise<Date> {
  const sessionId = assertSessionId(params.sessionId);
  const token = assertLeaseToken(params.token);
  const ttlMs = assertTtlMs(params.ttlMs);
  const result = await db.query({ name: 'loopfleet_renew_lease', text: RENEW_LEASE_SQL, values: [sessionId, token, ttlMs] });
  if (result.rows[0] === undefined) {
    throw new LeaseLostError(`lease ${token} of session ${sessionId} is no longer held`, { details: { sessionId, token } });
  }
  return parseRow(renewedSchema, result.rows[0], `lease of session ${sessionId}`).expiresAt;
}
