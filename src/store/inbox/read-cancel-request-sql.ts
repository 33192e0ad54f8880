/** The session's durable cancel request time (null when none waits). Params: $1 session id. */
export const READ_CANCEL_REQUEST_SQL = `SELECT cancel_requested_at AS "requestedAt" FROM sessions WHERE id = $1`;
