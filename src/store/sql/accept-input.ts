
/**
 * Creates the session when missing and, either way, takes its row lock in one statement: the no-op
 * `DO UPDATE` locks the existing row. Every accept of a session passes here, so they run one after
 * another, and the seq each one reads below is final (DESIGN.md I2, reference R5).
 * Params: $1 session id.
 */
export const LOCK_SESSION_FOR_ACCEPT_SQL = `
INSERT INTO sessions (id) VALUES ($1)
ON CONFLICT (id) DO UPDATE SET updated_at = sessions.updated_at
RETURNING next_seq AS "nextSeq"`;

/** An input already accepted under this id. Params: $1 session id, $2 input id. */
export const FIND_ACCEPTED_INPUT_SQL = `
SELECT seq FROM session_inputs WHERE session_id = $1 AND input_id = $2`;

/**
 * Inserts the input with the next seq and advances the session's allocator, only if the insert
 * happened. `accepted_at` is the time of the insert, taken under the row lock, so it increases with
 * seq (the transaction start time would not: a transaction may start first and lock last).
 * Params: $1 session id, $2 seq, $3 input id, $4 kind, $5 mode, $6 payload (jsonb text), $7 origin job id.
 */
export const INSERT_INPUT_SQL = `
WITH inserted AS (
  INSERT INTO session_inputs (session_id, seq, input_id, kind, mode, payload, origin_job_id, accepted_at)
  VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, clock_timestamp())
  ON CONFLICT (session_id, input_id) DO NOTHING
  RETURNING seq
)
UPDATE sessions SET next_seq = inserted.seq, updated_at = now()
  FROM inserted
 WHERE sessions.id = $1
RETURNING inserted.seq`;

