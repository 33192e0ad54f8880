import type { BatchStatement } from '../batching/row-batcher.js';
import { lockedSession, lockSessionsCte } from '../fencing/lock-sessions-sql.js';

/**
 * Frees the lease of each session whose token still holds it. The token stays on the row (a stale
 * holder still fails the fence), and the next acquisition draws a higher one. A holder that published
 * the `input_finished` of every input it ended clears `finishes_owed` in the same write. Takes its
 * releases as rows, so releases of different sessions share a statement (`../batching/row-batcher.ts`); each
 * row is matched on its own, and a stale or already released one matches nothing.
 * Params: $1 a JSON array of `{ "session_id", "lease_token", "finishes_published" }`. Returns
 * `sessionId` per freed lease.
 */
export const RELEASE_LEASES: BatchStatement = {
  name: 'loopfleet_release_leases',
  text: `
WITH r AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(session_id text, lease_token bigint, finishes_published boolean)
),
${lockSessionsCte('r', 'locking.lease_token = r.lease_token AND locking.lease_expires_at IS NOT NULL')}
UPDATE sessions AS s
   SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
       finishes_owed = s.finishes_owed AND NOT coalesce(r.finishes_published, false)
  FROM r
 WHERE s.id = r.session_id AND ${lockedSession('s')} AND s.lease_token = r.lease_token AND s.lease_expires_at IS NOT NULL
RETURNING s.id AS "sessionId"`,
};
