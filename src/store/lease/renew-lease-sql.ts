/**
 * Extends a lease still held under this token. A released lease (no expiry) is not revived: a late
 * heartbeat must not take back a session its holder gave up.
 * Params: $1 session id, $2 token, $3 ttl in milliseconds.
 */
export const RENEW_LEASE_SQL = `
UPDATE sessions
   SET lease_expires_at = now() + $3::bigint * interval '1 millisecond'
 WHERE id = $1 AND lease_token = $2 AND lease_expires_at IS NOT NULL
RETURNING lease_expires_at AS "expiresAt"`;
