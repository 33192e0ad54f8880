import { z } from 'zod';
import { SessionNotFoundError } from '../../core/errors/index.js';
import { BUDGET_PERIODS, BUDGET_SCOPES, BUDGET_UNITS, type BudgetRecord, type ListBudgetsOptions } from '../../core/ports/tenant-admin.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { assertBudgetId, resolveBudgetList, resolveBudgetWrite } from './budget-admin-options.js';
import { DELETE_BUDGET_SQL, GET_BUDGET_SQL, listBudgetsQuery, setBudgetQuery } from './budget-admin-sql.js';

const amount = z.string().regex(/^\d+$/);

const budgetRowSchema = z.object({
  id: z.number().int().positive(),
  scope: z.enum(BUDGET_SCOPES),
  tenant: z.string().min(1),
  agent: z.string(),
  sessionId: z.string(),
  unit: z.enum(BUDGET_UNITS),
  period: z.enum(BUDGET_PERIODS),
  limitAmount: amount,
  windowStart: z.date(),
  usedAmount: amount,
  // Negative only if enforcement broke its own check: shown as stored, not hidden.
  reservedAmount: z.string().regex(/^-?\d+$/),
  createdAt: z.date(),
  updatedAt: z.date(),
});

function decodeBudget(row: unknown): BudgetRecord {
  return parseRow(budgetRowSchema, row, `budget ${String((row as { id?: unknown } | null)?.id)}`);
}

/**
 * Creates or replaces a budget (keyed by tenant, scope, agent, session, unit and period), in one
 * statement; answers it with its current window's use. `session.not_found` for a session budget whose
 * session does not exist (or is another tenant's than the one named), with nothing written.
 */
export async function setBudget(db: Queryable, value: unknown): Promise<BudgetRecord> {
  const write = resolveBudgetWrite(value);
  const result = await db.query(setBudgetQuery(write));
  const row: unknown = result.rows[0];
  if (row === undefined) throw new SessionNotFoundError(`session ${write.sessionId} does not exist`, { details: { sessionId: write.sessionId } });
  return decodeBudget(row);
}

/** One budget with its current window's use, or null. */
export async function getBudget(db: Queryable, id: unknown): Promise<BudgetRecord | null> {
  const result = await db.query(GET_BUDGET_SQL, [assertBudgetId(id)]);
  const row: unknown = result.rows[0];
  return row === undefined ? null : decodeBudget(row);
}

/** A page of budgets by id, filtered, each with its current window's use. */
export async function listBudgets(db: Queryable, options: ListBudgetsOptions | undefined): Promise<BudgetRecord[]> {
  const result = await db.query(listBudgetsQuery(resolveBudgetList(options)));
  return result.rows.map((row: unknown) => decodeBudget(row));
}

/** Deletes a budget with its use and reservations; false when there was none. */
export async function deleteBudget(db: Queryable, id: unknown): Promise<boolean> {
  const result = await db.query<{ n: number }>(DELETE_BUDGET_SQL, [assertBudgetId(id)]);
  return (result.rows[0]?.n ?? 0) > 0;
}
