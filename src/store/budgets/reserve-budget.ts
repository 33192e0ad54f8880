import type { BudgetPeriod, BudgetReservation, BudgetReserveRequest, BudgetScope, BudgetUnit } from '../../core/ports/budgets.js';
import type { LeaseLostError } from '../../core/errors/index.js';
import { leaseLost } from '../fencing/fence.js';
import type { Queryable } from '../postgres/queryable.js';
import { RESERVE_BUDGET_BATCH_SQL, RESERVE_BUDGET_SQL } from './reserve-budget-sql.js';

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

/** A reserve's outcome: what it did, or `lease.lost` when the token is not the session's. */
export type ReserveOutcome = BudgetReservation | LeaseLostError;

/**
 * Reserves a call's worst case (docs/budgets.md): one statement. A tenant without budgets costs one
 * index probe inside it. A token that is no longer the session's is `lease.lost`, nothing reserved.
 */
export async function reserveBudget(db: Queryable, request: BudgetReserveRequest): Promise<BudgetReservation> {
  const result = await db.query<ReserveRow>(RESERVE_BUDGET_SQL, [
    request.sessionId,
    request.leaseToken,
    request.callKey,
    worstTokens(request),
    worstPicoUsd(request),
  ]);
  const row = result.rows[0];
  if (row === undefined) throw new Error('loopfleet_budget_reserve returned no row');
  const outcome = reservation(row, request);
  if (outcome instanceof Error) throw outcome;
  return outcome;
}

/**
 * Reserves the calls of many sessions in one statement (one per session): each is decided in
 * session id order as if they had run one after the other. A stale token is `lease.lost` for its
 * own call only.
 */
export async function reserveBudgets(db: Queryable, requests: readonly BudgetReserveRequest[]): Promise<ReserveOutcome[]> {
  const calls = requests.map((request) => ({
    session_id: request.sessionId,
    lease_token: request.leaseToken,
    call_key: request.callKey,
    tokens: worstTokens(request),
    pico_usd: worstPicoUsd(request),
  }));
  const result = await db.query<ReserveRow & { callSession: string }>({ name: 'loopfleet_budget_reserve_batch', text: RESERVE_BUDGET_BATCH_SQL, values: [JSON.stringify(calls)] });
  const bySession = new Map(result.rows.map((row) => [row.callSession, row]));
  return requests.map((request) => {
    const row = bySession.get(request.sessionId);
    if (row === undefined) throw new Error(`loopfleet_budget_reserve_batch returned no row for session ${request.sessionId}`);
    return reservation(row, request);
  });
}

function worstTokens(request: BudgetReserveRequest): number {
  return Math.max(0, Math.ceil(request.tokens));
}

function worstPicoUsd(request: BudgetReserveRequest): number | null {
  return request.picoUsd === null ? null : Math.max(0, Math.ceil(request.picoUsd));
}

function reservation(row: ReserveRow, request: BudgetReserveRequest): ReserveOutcome {
  if (row.status === 'stale') return leaseLost(request.sessionId, request.leaseToken, 'budget reserve');
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
