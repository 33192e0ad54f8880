/**
 * Extends a lease still held under this token. A released lease (no expiry) is not revived: a late
 * heartbeat must not take back a session its holder gave up. Nor is a lapsed lease of a tenant with
 * a cap on inputs running at once (docs/tenant-limits.md): its slot stopped counting when it lapsed
 * and may have gone to another session, so reviving it could put the tenant over its cap. The
 * holder gets `lease.lost` and stops; another drain resumes the input. A live lease never reads
 * `tenant_settings` (the first test of the OR holds).
 * Params: $1 session id, $2 token, $3 ttl in milliseconds.
 */
export const RENEW_LEASE_SQL = `
UPDATE sessions
   SET lease_expires_at = now() + $3::bigint * interval '1 millisecond'
 WHERE id = $1 AND lease_token = $2 AND lease_expires_at IS NOT NULL
   AND (lease_expires_at > now()
        OR NOT EXISTS (SELECT 1 FROM tenant_settings AS ts WHERE ts.tenant = sessions.tenant AND ts.max_concurrent_inputs IS NOT NULL))
RETURNING lease_expires_at AS "expiresAt"`;
