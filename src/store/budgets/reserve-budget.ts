import type { BudgetPeriod, BudgetReservation, BudgetReserveRequest, BudgetScope, BudgetUnit } from '../../core/ports/budgets.js';
import { leaseLost } from '../fencing/fence.js';
import type { Queryable } from '../postgres/queryable.js';
import { RESERVE_BUDGET_SQL } from './reserve-budget-sql.js';

interface ReserveRow {
  status: 'stale' | 'none' | 'reserved' | 'refused';
  reason: 'limit' | 'unpriced_model' | null;
  budgetId: string | null;
  scope: BudgetScope | null;
  tenant: string | null;
  agent: string | null;
  sessionId: string | null;
  unit: BudgetUnit | null;
  period: BudgetPeriod | null;
  windowStart: Date | null;
  limit: string | null;
  used: string | null;
  reserved: string | null;
}

/**
 * Reserves a call's worst case (docs/budgets.md): one statement. A tenant without budgets costs one
 * index probe inside it. A token that is no longer the session's is `lease.lost`, nothing reserved.
 */
export async function reserveBudget(db: Queryable, request: BudgetReserveRequest): Promise<BudgetReservation> {
  const result = await db.query<ReserveRow>(RESERVE_BUDGET_SQL, [
    request.sessionId,
    request.leaseToken,
    request.callKey,
    Math.max(0, Math.ceil(request.tokens)),
    request.picoUsd === null ? null : Math.max(0, Math.ceil(request.picoUsd)),
  ]);
  const row = result.rows[0];
  if (row === undefined) throw new Error('loopfleet_budget_reserve returned no row');
  if (row.status === 'stale') throw leaseLost(request.sessionId, request.leaseToken, 'budget reserve');
  if (row.status === 'none' || row.status === 'reserved') return { kind: row.status };
  return {
    kind: 'refused',
    reason: row.reason ?? 'limit',
    budget: {
      budgetId: Number(row.budgetId),
      scope: row.scope ?? 'tenant',
      tenant: row.tenant ?? '',
      agent: row.agent ?? '',
      sessionId: row.sessionId ?? '',
      unit: row.unit ?? 'tokens',
      period: row.period ?? 'total',
      windowStart: (row.windowStart ?? new Date(0)).toISOString(),
    },
    limit: Number(row.limit ?? 0),
    used: Number(row.used ?? 0),
    reserved: Number(row.reserved ?? 0),
  };
}
