/**
 * Takes the lease when it is free or lapsed, on the database clock, with a fresh fencing token from
 * the database-wide `lease_token_seq`: never reused, even by a session id deleted and created again
 * (I3). Concurrent callers serialise on the row lock and re-check the condition, so exactly
 * one wins; the winner's `nextval` is evaluated once it holds the lock (a waiter that re-checks
 * evaluates it again), so each acquisition's token exceeds every earlier one of the session.
 * Params: $1 session id, $2 owner, $3 ttl in milliseconds.
 */
export const ACQUIRE_LEASE_SQL = `
UPDATE sessions
   SET lease_owner = $2,
       lease_token = nextval('lease_token_seq'),
       lease_expires_at = now() + $3::bigint * interval '1 millisecond',
       updated_at = now()
 WHERE id = $1
   AND (lease_expires_at IS NULL OR lease_expires_at <= now())
RETURNING lease_token AS "token", lease_expires_at AS "expiresAt"`;

/**
 * Who holds the lease and for how much longer (ms, rounded up), the session's tenant and that
 * tenant's cap on inputs running at once (null: none), and the session's queue. Params: $1 session id.
 */
export const LEASE_HOLDER_SQL = `
SELECT lease_owner AS "holder",
       greatest(0, ceil(extract(epoch FROM lease_expires_at - now()) * 1000))::bigint AS "retryAfterMs",
       tenant,
       queue,
       (SELECT ts.max_concurrent_inputs FROM tenant_settings AS ts WHERE ts.tenant = sessions.tenant) AS "cap"
  FROM sessions
 WHERE id = $1`;
