import type { BudgetCrossing, BudgetPort, BudgetReservation, BudgetReserveRequest, BudgetSettleRequest } from '../../core/ports/budgets.js';
import { BatchQueue, type BatchOptions } from '../batching/batch-queue.js';
import type { Queryable } from '../postgres/queryable.js';
import { reserveBudget, reserveBudgets, type ReserveOutcome } from './reserve-budget.js';
import { releaseStaleReservations, settleBudget, settleBudgets } from './settle-budget.js';

/**
 * {@link BudgetPort} on a pool, with group commit across sessions (docs/budgets.md, "What it
 * costs"): reserves ready at once go in one statement, and so do settles, so a tenant's usage rows
 * are locked once per batch rather than once per call. A call alone goes as one statement of its own.
 * `batch` as the session store's writes take it (`maxSize` 1: each call alone).
 */
export class PostgresBudgetPort implements BudgetPort {
  private readonly reserves: BatchQueue<BudgetReserveRequest, ReserveOutcome>;
  private readonly settles: BatchQueue<BudgetSettleRequest, BudgetCrossing[]>;

  constructor(
    private readonly db: Queryable,
    batch: BatchOptions = {},
  ) {
    this.reserves = new BatchQueue<BudgetReserveRequest, ReserveOutcome>(batch, 'budget reserve', (requests) => sendReserves(db, requests), oneCallPerSession);
    this.settles = new BatchQueue<BudgetSettleRequest, BudgetCrossing[]>(batch, 'budget settle', (requests) => sendSettles(db, requests), oneCallPerSession);
  }

  async reserve(request: BudgetReserveRequest): Promise<BudgetReservation> {
    const outcome = await this.reserves.submit(request);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  settle(request: BudgetSettleRequest): Promise<BudgetCrossing[]> {
    return this.settles.submit(request);
  }

  releaseStale(limit: number): Promise<number> {
    return releaseStaleReservations(this.db, limit);
  }
}

/** One call: the single-call function (migration 0010); more: the batch one (migration 0013). */
async function sendReserves(db: Queryable, requests: readonly BudgetReserveRequest[]): Promise<ReserveOutcome[]> {
  if (requests.length > 1) return reserveBudgets(db, requests);
  // A stale token throws `lease.lost`, which rejects this call alone.
  return [await reserveBudget(db, requests[0]!)];
}

async function sendSettles(db: Queryable, requests: readonly BudgetSettleRequest[]): Promise<BudgetCrossing[][]> {
  if (requests.length > 1) return settleBudgets(db, requests);
  return [await settleBudget(db, requests[0]!)];
}

/** The waiting calls in order, one per session (a second call of a session waits for the next batch), up to `maxSize`. */
function oneCallPerSession(waiting: readonly { sessionId: string }[], maxSize: number): Set<number> {
  const chosen = new Set<number>();
  const sessions = new Set<string>();
  for (const [index, call] of waiting.entries()) {
    if (chosen.size === maxSize) break;
    if (sessions.has(call.sessionId)) continue;
    sessions.add(call.sessionId);
    chosen.add(index);
  }
  return chosen;
}
