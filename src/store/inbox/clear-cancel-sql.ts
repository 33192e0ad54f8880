/** Clears the cancel flag, fenced by the lease token. Params: $1 session id, $2 lease token. */
export const CLEAR_CANCEL_SQL = `
UPDATE sessions
   SET cancel_requested_at = NULL, updated_at = now()
 WHERE id = $1 AND lease_token = $2`;
