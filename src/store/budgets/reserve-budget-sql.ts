/**
 * Commits without waiting for the WAL flush (docs/budgets.md, "Commits"): the statement's own
 * transaction, so a budget's usage row is not held locked through a disk flush. Evaluated before
 * the function it is joined to (LATERAL), though only the commit reads it.
 */
export const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) AS async_commit(setting)`;

/** The columns a reserve returns, named as {@link ReserveRow} has them. */
const RESERVE_COLUMNS = `r_status AS "status", r_reason AS "reason", r_budget_id::text AS "budgetId", r_scope AS "scope", r_tenant AS "tenant",
       r_agent AS "agent", r_unit AS "unit", r_period AS "period", r_window_start AS "windowStart",
       r_limit::text AS "limit", r_used::text AS "used", r_reserved::text AS "reserved"`;

/**
 * One call's reservation on every budget that applies, or on none (`loopfleet_budget_reserve`,
 * migration 0010): one round trip, one transaction, committed without waiting for the WAL flush.
 * Params: $1 session id, $2 lease token, $3 call key, $4 worst-case tokens, $5 worst-case picodollars (NULL: unpriced).
 */
export const RESERVE_BUDGET_SQL = `
SELECT ${RESERVE_COLUMNS}, r_session_id AS "sessionId"
  FROM ${ASYNC_COMMIT} CROSS JOIN LATERAL loopfleet_budget_reserve($1, $2, $3, $4, $5)`;

/**
 * The reservations of many calls of distinct sessions (`loopfleet_budget_reserve_batch`, migration
 * 0013): one round trip, one transaction. Param: $1 a JSON array of {session_id, lease_token,
 * call_key, tokens, pico_usd}. One row per call, its session in `callSession`.
 */
export const RESERVE_BUDGET_BATCH_SQL = `
SELECT r_session_id AS "callSession", ${RESERVE_COLUMNS}, r_budget_session AS "sessionId"
  FROM ${ASYNC_COMMIT} CROSS JOIN LATERAL loopfleet_budget_reserve_batch($1::jsonb)`;
