/**
 * Frees the lease if this token still holds it. The token stays on the row (a stale holder still
 * fails the fence), and the next acquisition draws a higher one. Params: $1 session id, $2 token.
 */
export const RELEASE_LEASE_SQL = `
UPDATE sessions
   SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
 WHERE id = $1 AND lease_token = $2 AND lease_expires_at IS NOT NULL`;
