import { INPUT_COLUMNS } from '../rows/input-row.js';

/** One input by seq. Params: $1 session id, $2 seq. */
export const SELECT_INPUT_BY_SEQ_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs WHERE session_id = $1 AND seq = $2`;

/** One input by its idempotency key. Params: $1 session id, $2 input id. */
export const SELECT_INPUT_BY_ID_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs WHERE session_id = $1 AND input_id = $2`;

/**
 * A page of inputs in seq order. Params: $1 session id, $2 statuses (text[], or null for all),
 * $3 seq to start after, $4 limit.
 */
export const LIST_INPUTS_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs
 WHERE session_id = $1
   AND ($2::text[] IS NULL OR status = ANY($2::text[]))
   AND seq > $3
 ORDER BY seq
 LIMIT $4`;
