import type { BatchStatement } from '../batching/row-batcher.js';

/**
 * Accepts inputs in one autocommit statement (I2, R5 in docs/invariants.md): one row per input, each
 * of a different session, so concurrent accepts of different sessions share a statement
 * (`../batching/row-batcher.ts`).
 *
 * `locked` creates each session when missing (its first input gets seq 1) or advances the existing
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
 * up no seq. The batcher then sends each input alone, and the caller of the duplicate reads the
 * original seq with {@link FIND_ACCEPTED_INPUT_SQL}.
 *
 * Params: $1 a JSON array of `{ session_id, input_id, kind, mode, payload, origin_job_id }`.
 * Returns `sessionId` and `seq` per input.
 */
export const ACCEPT_INPUTS: BatchStatement = {
  name: 'loopfleet_accept_inputs',
  text: `
WITH req AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS r(session_id text, input_id text, kind text, mode text, payload jsonb, origin_job_id text)
),
locked AS (
  -- In session id order, as every batched statement locks sessions (../fencing/lock-sessions-sql.ts).
  INSERT INTO sessions (id, next_seq) SELECT req.session_id, 1 FROM req ORDER BY req.session_id COLLATE "C"
  ON CONFLICT (id) DO UPDATE SET next_seq = sessions.next_seq + 1, updated_at = now()
  RETURNING id, next_seq
)
INSERT INTO session_inputs (session_id, seq, input_id, kind, mode, payload, origin_job_id, accepted_at)
SELECT locked.id, locked.next_seq, req.input_id, req.kind, req.mode, req.payload, req.origin_job_id, clock_timestamp()
  FROM locked
  JOIN req ON req.session_id = locked.id
RETURNING session_id AS "sessionId", seq`,
};

/** The unique index on `session_inputs (session_id, input_id)` that a repeated input id violates. */
export const INPUT_ID_UNIQUE_INDEX = 'session_inputs_input_id_uq';

/** An input already accepted under this id. Params: $1 session id, $2 input id. */
export const FIND_ACCEPTED_INPUT_SQL = `
SELECT seq FROM session_inputs WHERE session_id = $1 AND input_id = $2`;
