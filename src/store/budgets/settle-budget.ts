import { crossedThresholds, type BudgetCrossing, type BudgetPeriod, type BudgetScope, type BudgetSettleRequest, type BudgetUnit } from '../../core/ports/budgets.js';
import type { Queryable } from '../postgres/queryable.js';
import { RELEASE_STALE_RESERVATIONS_SQL, SETTLE_BUDGET_SQL } from './settle-budget-sql.js';

interface SettleRow {
  budgetId: string;
  scope: BudgetScope;
  unit: BudgetUnit;
  period: BudgetPeriod;
  limit: string;
  usedBefore: string;
  usedAfter: string;
}

/**
 * Settles a call to its actual usage (docs/budgets.md): one statement. The thresholds are computed
 * from `used` before and after this settle under the row lock, so each is crossed by exactly one
 * settle fleet-wide.
 */
export async function settleBudget(db: Queryable, request: BudgetSettleRequest): Promise<BudgetCrossing[]> {
  const result = await db.query<SettleRow>(SETTLE_BUDGET_SQL, [
    request.sessionId,
    request.callKey,
    Math.max(0, Math.round(request.tokens)),
    request.picoUsd === null ? null : Math.max(0, Math.round(request.picoUsd)),
  ]);
  const crossings: BudgetCrossing[] = [];
  for (const row of result.rows) {
    const limit = BigInt(row.limit);
    for (const threshold of crossedThresholds(limit, BigInt(row.usedBefore), BigInt(row.usedAfter))) {
      crossings.push({ budgetId: Number(row.budgetId), scope: row.scope, unit: row.unit, period: row.period, threshold, limit: Number(limit), used: Number(row.usedAfter) });
    }
  }
  return crossings;
}

/** Gives back reservations whose holder is gone (the sweeper): at most `limit`, skipping rows in use. */
export async function releaseStaleReservations(db: Queryable, limit: number): Promise<number> {
  const result = await db.query<{ released: number }>(RELEASE_STALE_RESERVATIONS_SQL, [limit]);
  return result.rows[0]?.released ?? 0;
}
