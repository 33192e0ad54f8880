import { ASYNC_COMMIT } from './reserve-budget-sql.js';

/** The columns a settle returns, named as `SettleRow` has them. */
const SETTLE_COLUMNS = `r_budget_id::text AS "budgetId", r_scope AS "scope", r_unit AS "unit", r_period AS "period",
       r_limit::text AS "limit", r_used_before::text AS "usedBefore", r_used_after::text AS "usedAfter"`;

/**
 * Settles one call (`loopfleet_budget_settle`, migration 0010): one round trip, one transaction
 * committed without waiting for the WAL flush;
 * one row per budget charged, with `used` before and after.
 * Params: $1 session id, $2 call key, $3 tokens, $4 picodollars (NULL: unpriced).
 */
export const SETTLE_BUDGET_SQL = `
SELECT ${SETTLE_COLUMNS}
  FROM ${ASYNC_COMMIT} CROSS JOIN LATERAL loopfleet_budget_settle($1, $2, $3, $4)`;

/**
 * Settles the calls of many sessions (`loopfleet_budget_settle_batch`, migration 0013): one round
 * trip, one transaction. Param: $1 a JSON array of {session_id, call_key, tokens, pico_usd}. One row
 * per budget charged per call, its session in `callSession`.
 */
export const SETTLE_BUDGET_BATCH_SQL = `
SELECT r_session_id AS "callSession", ${SETTLE_COLUMNS}
  FROM ${ASYNC_COMMIT} CROSS JOIN LATERAL loopfleet_budget_settle_batch($1::jsonb)`;

/** The sweeper's release of reservations whose holder is gone. Params: $1 most rows. */
export const RELEASE_STALE_RESERVATIONS_SQL = `SELECT loopfleet_budget_release_stale($1) AS "released"`;
