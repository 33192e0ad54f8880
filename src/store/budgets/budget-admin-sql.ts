import type { BudgetWrite } from '../../core/ports/tenant-admin.js';
import type { ResolvedBudgetList } from './budget-admin-options.js';

/**
 * The start of a budget's current window, for a `budgets` row aliased `b`: the UTC day or month of
 * `loopfleet_now()` (the clock enforcement counts on; a test may redefine it), or the epoch for
 * `total`. Enforcement (the reserve and settle functions) must compute the same start.
 */
export const BUDGET_WINDOW_START = `loopfleet_budget_window(b.period, loopfleet_now())`;

/**
 * A budget row `b` with its current window's use: amounts as exact integer text. Reads the one
 * `budget_usage` row of the window by its primary key.
 */
const BUDGET_VIEW = `SELECT b.id, b.scope, b.tenant, b.agent, b.session_id AS "sessionId", b.unit, b.period,
       b.limit_amount::text AS "limitAmount", w.start AS "windowStart",
       COALESCE(u.used, 0)::text AS "usedAmount", COALESCE(u.reserved, 0)::text AS "reservedAmount",
       b.created_at AS "createdAt", b.updated_at AS "updatedAt"
  FROM b
 CROSS JOIN LATERAL (SELECT ${BUDGET_WINDOW_START} AS start) AS w
  LEFT JOIN budget_usage AS u ON u.budget_id = b.id AND u.window_start = w.start`;

const UPSERT_TAIL = `ON CONFLICT (tenant, scope, agent, session_id, unit, period)
  DO UPDATE SET limit_amount = excluded.limit_amount, updated_at = now()
  RETURNING *`;

/**
 * Creates the budget or, when one with the same key exists, replaces its limit (its use so far stays).
 * A `session` budget takes its tenant from the session row, in the same statement: no row when the
 * session does not exist or belongs to another tenant than the one named.
 */
export function setBudgetQuery(write: BudgetWrite): { text: string; values: unknown[] } {
  if (write.scope === 'session') {
    return {
      text: `WITH b AS (
  INSERT INTO budgets (scope, tenant, agent, session_id, unit, period, limit_amount)
  SELECT 'session', s.tenant, '', s.id, $3, $4, $5::bigint FROM sessions AS s WHERE s.id = $1 AND ($2::text IS NULL OR s.tenant = $2)
  ${UPSERT_TAIL}
) ${BUDGET_VIEW}`,
      values: [write.sessionId, write.tenant, write.unit, write.period, write.limitAmount],
    };
  }
  return {
    text: `WITH b AS (
  INSERT INTO budgets (scope, tenant, agent, session_id, unit, period, limit_amount)
  VALUES ($1, $2, $3, '', $4, $5, $6::bigint)
  ${UPSERT_TAIL}
) ${BUDGET_VIEW}`,
    values: [write.scope, write.tenant, write.agent, write.unit, write.period, write.limitAmount],
  };
}

/** One budget by id. */
export const GET_BUDGET_SQL = `WITH b AS (SELECT * FROM budgets WHERE id = $1) ${BUDGET_VIEW}`;

/** Deletes one budget; its use and reservations go with it (foreign key cascade, and by budget id). */
export const DELETE_BUDGET_SQL = `WITH gone AS (DELETE FROM budgets WHERE id = $1 RETURNING id),
  held AS (DELETE FROM budget_reservations WHERE budget_id IN (SELECT id FROM gone))
SELECT count(*)::int AS n FROM gone`;

/** A page of budgets by id, filtered: only the filters asked for are in the text. */
export function listBudgetsQuery(list: ResolvedBudgetList): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = [`id > ${param(list.afterId)}`];
  if (list.tenant !== null) where.push(`tenant = ${param(list.tenant)}`);
  if (list.scope !== null) where.push(`scope = ${param(list.scope)}`);
  if (list.agent !== null) where.push(`agent = ${param(list.agent)}`);
  if (list.sessionId !== null) where.push(`session_id = ${param(list.sessionId)}`);
  const text = `WITH b AS (SELECT * FROM budgets WHERE ${where.join(' AND ')} ORDER BY id LIMIT ${param(list.limit)}) ${BUDGET_VIEW} ORDER BY b.id`;
  return { text, values };
}
