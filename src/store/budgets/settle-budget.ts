import { crossedThresholds, type BudgetCrossing, type BudgetPeriod, type BudgetScope, type BudgetSettleRequest, type BudgetUnit } from '../../core/ports/budgets.js';
import type { Queryable } from '../postgres/queryable.js';
import { RELEASE_STALE_RESERVATIONS_SQL, SETTLE_BUDGET_BATCH_SQL, SETTLE_BUDGET_SQL } from './settle-budget-sql.js';

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
  const result = await db.query<SettleRow>(SETTLE_BUDGET_SQL, [request.sessionId, request.callKey, usedTokens(request), usedPicoUsd(request)]);
  return crossings(result.rows);
}

/**
 * Settles the calls of many sessions in one statement (one per session). A budget's charges go in
 * session id order, each with `used` before and after it, so each threshold is still crossed by
 * exactly one settle.
 */
export async function settleBudgets(db: Queryable, requests: readonly BudgetSettleRequest[]): Promise<BudgetCrossing[][]> {
  const calls = requests.map((request) => ({ session_id: request.sessionId, call_key: request.callKey, tokens: usedTokens(request), pico_usd: usedPicoUsd(request) }));
  const result = await db.query<SettleRow & { callSession: string }>({ name: 'loopfleet_budget_settle_batch', text: SETTLE_BUDGET_BATCH_SQL, values: [JSON.stringify(calls)] });
  const bySession = new Map<string, SettleRow[]>();
  for (const row of result.rows) {
    const rows = bySession.get(row.callSession);
    if (rows === undefined) bySession.set(row.callSession, [row]);
    else rows.push(row);
  }
  return requests.map((request) => crossings(bySession.get(request.sessionId) ?? []));
}

/** Gives back reservations whose holder is gone (the sweeper): at most `limit`, skipping rows in use. */
export async function releaseStaleReservations(db: Queryable, limit: number): Promise<number> {
  const result = await db.query<{ released: number }>(RELEASE_STALE_RESERVATIONS_SQL, [limit]);
  return result.rows[0]?.released ?? 0;
}

function usedTokens(request: BudgetSettleRequest): number {
  return Math.max(0, Math.round(request.tokens));
}

function usedPicoUsd(request: BudgetSettleRequest): number | null {
  return request.picoUsd === null ? null : Math.max(0, Math.round(request.picoUsd));
}

function crossings(rows: readonly SettleRow[]): BudgetCrossing[] {
  const crossed: BudgetCrossing[] = [];
  for (const row of rows) {
    const limit = BigInt(row.limit);
    for (const threshold of crossedThresholds(limit, BigInt(row.usedBefore), BigInt(row.usedAfter))) {
      crossed.push({ budgetId: Number(row.budgetId), scope: row.scope, unit: row.unit, period: row.period, threshold, limit: Number(limit), used: Number(row.usedAfter) });
    }
  }
  return crossed;
}
