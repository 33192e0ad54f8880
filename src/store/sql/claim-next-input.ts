import { INPUT_COLUMNS } from '../rows/input-row.js';

/**
 * Marks the lowest open input `running` (counting the attempt) and the session `running`. Its
 * predicate is exactly that of the partial index `session_inputs_open_idx`, so finished inputs are
 * never read however long the inbox history grows. `resumed` is true when the input was already
 * `running`: its previous holder died mid-run. `started_at` is the statement's clock time, not the
 * transaction's start (`now()`), which may precede the `accepted_at` of an input accepted while this
 * transaction waited for the session lock; the clock time comes after it (DESIGN.md I2).
 * Params: $1 session id. Run only under {@link LOCK_FENCED_SESSION_SQL}.
 */
export const CLAIM_NEXT_INPUT_SQL = `
WITH next AS (
  SELECT seq, status
    FROM session_inputs
   WHERE session_id = $1 AND status IN ('pending', 'running')
   ORDER BY seq
   LIMIT 1
),
claimed AS (
  UPDATE session_inputs AS i
     SET status = 'running',
         attempts = i.attempts + 1,
         started_at = coalesce(i.started_at, clock_timestamp())
    FROM next
   WHERE i.session_id = $1 AND i.seq = next.seq
  RETURNING i.*, next.status AS previous_status
),
marked AS (
  UPDATE sessions SET status = 'running', updated_at = now()
   WHERE id = $1 AND EXISTS (SELECT 1 FROM claimed)
)
SELECT ${INPUT_COLUMNS}, previous_status = 'running' AS resumed FROM claimed`;
