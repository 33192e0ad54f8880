/**
 * Accepts an input in one autocommit statement (DESIGN.md I2, reference R5).
 *
 * `locked` creates the session when missing (its first input gets seq 1) or advances the existing
 * row's allocator. `ON CONFLICT DO UPDATE` always updates the latest committed version of the row and
 * holds its lock until the statement commits, so concurrent accepts of a session run one after
 * another and each reads the final `next_seq`: seqs are gapless and follow commit order. The input row
 * takes that seq; the foreign key to `sessions` is checked at the end of the statement, when the row
 * created in `locked` is visible.
 *
 * `accepted_at` is `clock_timestamp()`, evaluated per row that `locked` returns, hence after the lock
 * was taken; so it increases with seq (the statement start time would not: a statement may start
 * first and lock last).
 *
 * There is deliberately no `ON CONFLICT` on the input insert: a repeated input id fails the statement
 * on {@link INPUT_ID_UNIQUE_INDEX}, which also rolls back the allocator increment, so a duplicate uses
 * up no seq. The caller then reads the original seq with {@link FIND_ACCEPTED_INPUT_SQL}.
 *
 * Params: $1 session id, $2 input id, $3 kind, $4 mode, $5 payload (jsonb text), $6 origin job id.
 */
export const ACCEPT_INPUT_SQL = `
WITH locked AS (
  INSERT INTO sessions (id, next_seq) VALUES ($1, 1)
  ON CONFLICT (id) DO UPDATE SET next_seq = sessions.next_seq + 1, updated_at = now()
  RETURNING next_seq
)
INSERT INTO session_inputs (session_id, seq, input_id, kind, mode, payload, origin_job_id, accepted_at)
SELECT $1, locked.next_seq, $2::text, $3::text, $4::text, $5::jsonb, $6::text, clock_timestamp()
  FROM locked
RETURNING seq`;

/** The unique index on `session_inputs (session_id, input_id)` that a repeated input id violates. */
export const INPUT_ID_UNIQUE_INDEX = 'session_inputs_input_id_uq';

/** An input already accepted under this id. Params: $1 session id, $2 input id. */
export const FIND_ACCEPTED_INPUT_SQL = `
SELECT seq FROM session_inputs WHERE session_id = $1 AND input_id = $2`;
