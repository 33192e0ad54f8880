import type { ReleaseLeaseParams } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { assertLeaseToken } from './arguments.js';
import type { Queryable } from './queryable.js';
import { RELEASE_LEASE_SQL } from './sql/release-lease.js';

/**
 * Gives the lease up so another worker can take the session at once. Returns false, and touches
 * nothing, when the token is stale or the lease was already released: releasing is part of
 * finishing, and a worker that lost its lease has nothing left to undo.
 */
export async function releaseLease(db: Queryable, params: ReleaseLeaseParams): Promise<boolean> {
  const sessionId = assertSessionId(params.sessionId);
  const token = assertLeaseToken(params.token);
  const result = await db.query({ name: 'loopfleet_release_lease', text: RELEASE_LEASE_SQL, values: [sessionId, token] });
  return result.rowCount === 1;
}
