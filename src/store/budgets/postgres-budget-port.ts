import type { BudgetCrossing, BudgetPort, BudgetReservation, BudgetReserveRequest, BudgetSettleRequest } from '../../core/ports/budgets.js';
import type { Queryable } from '../postgres/queryable.js';
import { reserveBudget } from './reserve-budget.js';
import { releaseStaleReservations, settleBudget } from './settle-budget.js';

/** {@link BudgetPort} on a pool: each call one autocommit statement (a plpgsql function). */
export class PostgresBudgetPort implements BudgetPort {
  constructor(private readonly db: Queryable) {}

  reserve(request: BudgetReserveRequest): Promise<BudgetReservation> {
    return reserveBudget(this.db, request);
  }

  settle(request: BudgetSettleRequest): Promise<BudgetCrossing[]> {
    return settleBudget(this.db, request);
  }

  releaseStale(limit: number): Promise<number> {
    return releaseStaleReservations(this.db, limit);
  }
}
