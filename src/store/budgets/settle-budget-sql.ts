import { ASYNC_COMMIT } from './reserve-budget-sql.js';

/**
 * Settles one call (`loopfleet_budget_settle`, migration 0010): one round trip, one transaction
 * committed without waiting for the WAL flush;
 * one row per budget charged, with `used` before and after.
 * Params: $1 session id, $2 call key, $3 tokens, $4 picodollars (NULL: unpriced).
 */
export const SETTLE_BUDGET_SQL = `
SELECT r_budget_id::text AS "budgetId", r_scope AS "scope", r_unit AS "unit", r_period AS "period",
       r_limit::text AS "limit", r_used_before::text AS "usedBefore", r_used_after::text AS "usedAfter"
  FROM ${ASYNC_COMMIT} CROSS JOIN LATERAL loopfleet_budget_settle($1, $2, $3, $4)`;

/** The sweeper's release of reservations whose holder is gone. Params: $1 most rows. */
export const RELEASE_STALE_RESERVATIONS_SQL = `SELECT loopfleet_budget_release_stale($1) AS "released"`;
