/**
 * A child's outcome into its parent's inbox, once, in one statement (docs/store.md, "Child
 * sessions"). The input id `child:<toolCallId>` makes it idempotent.
 *
 * `parent` locks the parent's row — on its latest version, after any wait — and allocates the seq
 * there (`next_seq + 1`), as an accept does, so seqs stay gapless and in commit order. For a waiting
 * call (`$3` true) `host` then locks the parent input the result answers, only while it is open
 * (`running` or `waiting`): the lock re-checks its status on the latest version, so an input a commit
 * ended while this statement waited for the parent's row gets no result. Such a result is `done` at
 * once, steered into that input (`steered_into`), so the run reads it back by its id and it finishes
 * with its host (the step's `joined` CTE gives it the host's result). A `wait: false` result is a
 * `pending` input of mode `steer`, which joins the parent's run like any steering input.
 *
 * `ON CONFLICT (session_id, input_id) DO NOTHING`: a result delivered before — or by a concurrent
 * call — inserts nothing, and `bumped` then advances nothing. Rows are locked parent row first, then
 * its input, the order of claims and steps.
 *
 * Params: $1 child id, $2 the payload (JSON text), $3 whether the call waits. Returns the
 * `parentSessionId` and `seq` of the inserted row; no row when nothing was written.
 */
export const DELIVER_CHILD_RESULT_SQL = `
WITH child AS (
  SELECT c.parent_session_id AS parent_id, c.spawn_input_seq, c.spawn_tool_call_id
    FROM sessions AS c
   WHERE c.id = $1 AND c.parent_session_id IS NOT NULL AND c.spawn_input_seq IS NOT NULL AND c.spawn_tool_call_id IS NOT NULL
     -- A child whose tree was cancelled from above delivers nothing: the cancel ends its parent's
     -- input with the open calls skipped, and a result written while that woken run is ending would
     -- sit in the inbox as done though the run never used it (test/integration/children/cancel-delete.test.ts).
     AND c.cascade_cancelled_at IS NULL
),
parent AS MATERIALIZED (
  SELECT p.id, p.next_seq, child.spawn_input_seq, child.spawn_tool_call_id
    FROM sessions AS p
    JOIN child ON p.id = child.parent_id
     FOR NO KEY UPDATE OF p
),
host AS MATERIALIZED (
  SELECT h.seq
    FROM session_inputs AS h
    JOIN parent ON h.session_id = parent.id AND h.seq = parent.spawn_input_seq
   WHERE $3::boolean AND h.status IN ('running', 'waiting')
     FOR NO KEY UPDATE OF h
),
inserted AS (
  INSERT INTO session_inputs
    (session_id, seq, input_id, kind, mode, payload, status, steered_into, accepted_at, started_at, finished_at)
  SELECT parent.id, parent.next_seq + 1, 'child:' || parent.spawn_tool_call_id, 'child',
         CASE WHEN $3::boolean THEN 'queue' ELSE 'steer' END,
         $2::jsonb,
         CASE WHEN $3::boolean THEN 'done' ELSE 'pending' END,
         CASE WHEN $3::boolean THEN parent.spawn_input_seq END,
         clock_timestamp(),
         CASE WHEN $3::boolean THEN clock_timestamp() END,
         CASE WHEN $3::boolean THEN clock_timestamp() END
    FROM parent
   WHERE NOT $3::boolean OR EXISTS (SELECT 1 FROM host)
  ON CONFLICT (session_id, input_id) DO NOTHING
  RETURNING session_id, seq
),
bumped AS (
  UPDATE sessions AS s
     SET next_seq = s.next_seq + 1, updated_at = now()
    FROM inserted
   WHERE s.id = inserted.session_id
)
SELECT session_id AS "parentSessionId", seq FROM inserted`;
