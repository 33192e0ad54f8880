import type { ReleaseLeaseParams } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertFlag, assertLeaseToken } from '../postgres/arguments.js';
import type { RowBatcher } from '../batching/row-batcher.js';
import { RELEASE_LEASES } from './release-lease-sql.js';

/**
 * Gives the lease up so another worker can take the session at once. Returns false, and touches
 * nothing, when the token is stale or the lease was already released: releasing is part of
 * finishing, and a worker that lost its lease has nothing left to undo. Releases of sessions ending
 * their drains at the same moment share one statement. With `finishesPublished` it also clears the
 * session's owed finishes (see {@link ReleaseLeaseParams}).
 */
export async function releaseLease(batcher: RowBatcher, params: ReleaseLeaseParams): Promise<boolean> {
  const sessionId = assertSessionId(params.sessionId);
  const token = assertLeaseToken(params.token);
  const published = assertFlag(params.finishesPublished, 'finishesPublished');
  const record = `{"session_id":${JSON.stringify(sessionId)},"lease_token":${token},"finishes_published":${published}}`;
  return (await batcher.submit({ statement: RELEASE_LEASES, sessionId, record })) !== undefined;
}
