/**
 * Marks pending inputs as delivered into a running input (steering). Nothing is marked unless the
 * target is running; the count lets the caller refuse a step that named inputs no longer pending.
 * Params: $1 session id, $2 seqs (bigint[]), $3 the running input's seq.
 */
export const DELIVER_STEER_SQL = `
WITH target AS (
  SELECT 1 FROM session_inputs WHERE session_id = $1 AND seq = $3 AND status = 'running'
),
delivered AS (
  UPDATE session_inputs
     SET status = 'done', attempts = attempts + 1, started_at = coalesce(started_at, now()), finished_at = now()
   WHERE session_id = $1 AND seq = ANY($2::bigint[]) AND status = 'pending' AND EXISTS (SELECT 1 FROM target)
  RETURNING seq
)
SELECT count(*)::bigint AS "delivered" FROM delivered`;
