/**
 * The tenant's cap on inputs running at once, its settings row locked until the transaction ends: every
 * capped take of the tenant's sessions serialises here, so each counts the leases the others took.
 * No row (or a null cap): the tenant has no cap any more. Params: $1 tenant.
 */
export const LOCK_TENANT_CAP_SQL = `
SELECT max_concurrent_inputs AS "cap"
  FROM tenant_settings
 WHERE tenant = $1
   FOR UPDATE`;

/**
 * The tenant's sessions holding a live lease, through the partial index `sessions_tenant_leased_idx`.
 * A lease that lapsed (its holder died) no longer counts: a dead worker's slot comes back on its own,
 * with nothing of its own to renew. Run after {@link LOCK_TENANT_CAP_SQL}, in a statement of its own:
 * its snapshot then sees every lease an earlier holder of the row lock took. Params: $1 tenant.
 */
export const COUNT_TENANT_LEASES_SQL = `
SELECT count(*)::int AS "running"
  FROM sessions
 WHERE tenant = $1
   AND lease_expires_at IS NOT NULL
   AND lease_expires_at > now()`;
