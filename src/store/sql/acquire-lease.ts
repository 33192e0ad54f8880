/**
 * Takes the lease when it is free or lapsed, on the database clock, bumping the fencing token.
 * Concurrent callers serialise on the row lock and re-check the condition, so exactly one wins.
 * Params: $1 session id, $2 owner, $3 ttl in milliseconds.
 */
export const ACQUIRE_LEASE_SQL = `
UPDATE sessions
   SET lease_owner = $2,
       lease_token = lease_token + 1,
       lease_expires_at = now() + $3::bigint * interval '1 millisecond',
       updated_at = now()
 WHERE id = $1
   AND (lease_expires_at IS NULL OR lease_expires_at <= now())
RETURNING lease_token AS "token", lease_expires_at AS "expiresAt"`;

/** Who holds the lease and for how much longer (ms, rounded up). Params: $1 session id. */
export const LEASE_HOLDER_SQL = `
SELECT lease_owner AS "holder",
       greatest(0, ceil(extract(epoch FROM lease_expires_at - now()) * 1000))::bigint AS "retryAfterMs"
  FROM sessions
 WHERE id = $1`;
