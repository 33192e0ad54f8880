/**
 * A session's inputs counted by status: one aggregate over the session's range of an index led by
 * session_id (the primary key (session_id, seq) or `session_inputs_input_id_uq`, as the planner
 * prefers), returning at most one row a status — never the input rows or their payloads; their TOASTed
 * payloads are not even read. Params: $1 session id.
 */
export const COUNT_INPUTS_SQL = `SELECT status, count(*) AS count
  FROM session_inputs
 WHERE session_id = $1
 GROUP BY status`;
