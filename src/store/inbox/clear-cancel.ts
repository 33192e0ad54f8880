import type { FencedParams } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertLeaseToken } from '../postgres/arguments.js';
import { leaseLost } from '../fencing/fence.js';
import type { Queryable } from '../postgres/queryable.js';
import { CLEAR_CANCEL_SQL } from './clear-cancel-sql.js';

/** Fenced. Clears the durable cancel flag; `lease.lost` (and nothing cleared) for a stale token. */
export async function clearCancel(db: Queryable, params: FencedParams): Promise<void> {
  const sessionId = assertSessionId(params.sessionId);
  const leaseToken = assertLeaseToken(params.leaseToken);
  const result = await db.query(CLEAR_CANCEL_SQL, [sessionId, leaseToken]);
  if (result.rowCount !== 1) throw leaseLost(sessionId, leaseToken, 'clearCancel');
}
