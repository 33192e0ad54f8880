/**
 * Parks the running input to wait for child sessions, fenced like every state-changing write: the
 * session row UPDATE is the fence (the caller's token, re-checked on the row's latest version) and
 * also checks that the input is `running` (on the snapshot, sound for the reason the step's
 * preconditions are: only the lease holder changes an input's status). The input becomes `waiting`
 * with the calls it waits for; the session `waiting_for_children`. Nothing else: no result, no
 * stats, `finishes_owed` untouched (the input did not end).
 * Params: $1 session id, $2 lease token, $3 input seq, $4 awaited tool call ids (a JSON array).
 * Returns the parked input's `seq`; no row when refused.
 */
export const PARK_INPUT_SQL = `
WITH fence AS (
  UPDATE sessions AS s
     SET status = 'waiting_for_children', updated_at = now()
   WHERE s.id = $1 AND s.lease_token = $2
     AND (SELECT r.status FROM session_inputs AS r WHERE r.session_id = $1 AND r.seq = $3) = 'running'
  RETURNING s.id
)
UPDATE session_inputs AS i
   SET status = 'waiting', awaiting = $4::jsonb
  FROM fence
 WHERE i.session_id = fence.id AND i.seq = $3 AND i.status = 'running'
RETURNING i.seq`;

/**
 * Why a park was refused (the failure path only): whether the token is still the current one, and
 * the input's status. Params: $1 session id, $2 lease token, $3 input seq.
 */
export const PARK_REFUSAL_SQL = `
SELECT s.lease_token = $2::bigint AS "leaseHeld",
       (SELECT r.status FROM session_inputs AS r WHERE r.session_id = $1 AND r.seq = $3) AS status
  FROM sessions AS s
 WHERE s.id = $1`;
