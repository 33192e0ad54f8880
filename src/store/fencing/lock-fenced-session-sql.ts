/**
 * The fence of an operation that may write nothing: locks the session row only if the caller's lease
 * token is still the current one. No row back means the lease was lost. Holding the row lock until
 * commit keeps a takeover from interleaving with the writes that follow.
 * Params: $1 session id, $2 lease token.
 */
export const LOCK_FENCED_SESSION_SQL = `
SELECT 1 FROM sessions WHERE id = $1 AND lease_token = $2 FOR UPDATE`;
