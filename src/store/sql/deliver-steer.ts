/**
 * Marks pending inputs as delivered into a running input (steering, DESIGN.md §4.4): `done`, with
 * `steered_into` naming the host, whose result they get when it finishes ({@link FINISH_INPUT_SQL}).
 * Nothing is marked unless the target is running; the count lets the caller refuse a step that named
 * inputs no longer pending. The delivery time is one clock reading taken after this statement's
 * snapshot, so it never precedes the `accepted_at` of an input it delivers.
 * Params: $1 session id, $2 seqs (bigint[]), $3 the running input's seq.
 */
export const DELIVER_STEER_SQL = `
WITH target AS (
  SELECT clock_timestamp() AS at FROM session_inputs WHERE session_id = $1 AND seq = $3 AND status = 'running'
),
delivered AS (
  UPDATE session_inputs AS i
     SET status = 'done',
         steered_into = $3,
         attempts = i.attempts + 1,
         started_at = coalesce(i.started_at, target.at),
         finished_at = target.at
    FROM target
   WHERE i.session_id = $1 AND i.seq = ANY($2::bigint[]) AND i.status = 'pending'
  RETURNING i.seq
)
SELECT count(*)::bigint AS "delivered" FROM delivered`;
