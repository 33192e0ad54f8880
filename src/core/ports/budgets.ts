/**
 * Budget enforcement (docs/budgets.md): before every LLM call the loop reserves the call's worst
 * case on every budget that applies to the session, and after it settles the reservation to what the
 * call used. Both are atomic across the fleet: concurrent calls of one tenant on many workers
 * overshoot a cap by at most one call's reservation.
 */

import type { BudgetPeriod, BudgetScope, BudgetUnit } from './tenant-admin.js';

// One definition of a budget's scope, unit and period, with the operator records.
export type { BudgetPeriod, BudgetScope, BudgetUnit } from './tenant-admin.js';

/** One budget and the window it counts in, as a refusal names it. */
export interface BudgetTarget {
  budgetId: number;
  scope: BudgetScope;
  tenant: string;
  /** The agent of an `agent` budget; '' otherwise. */
  agent: string;
  /** The session of a `session` budget; '' otherwise. */
  sessionId: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /** The window's start, ISO 8601 (the epoch for `total`). */
  windowStart: string;
}

/** Why a budget refused a call, as the input's result and error details carry it. */
export interface BudgetRefusal extends BudgetTarget {
  /** Tokens, or USD. */
  limit: number;
  used: number;
  /** What calls in flight held of it. */
  reserved: number;
  /** `limit`: no room; `unpriced_model`: it counts money and the model has no price. */
  reason: 'limit' | 'unpriced_model';
}

/** One call's hold: the session, its lease, and which call of it. */
export interface BudgetCallKey {
  sessionId: string;
  /** The reserve is refused (`lease.lost`) unless this is the session's current token. */
  leaseToken: number;
  /** The call within the session: `<inputSeq>:<round>:<kind>`; retries of a call share it. */
  callKey: string;
}

/** A call's worst case, reserved before it. */
export interface BudgetReserveRequest extends BudgetCallKey {
  /** Prompt estimate + the output cap. */
  tokens: number;
  /** The same at the model's prices, in picodollars; null when the model has no price. */
  picoUsd: number | null;
}

/** What a reserve did. */
export type BudgetReservation =
  /** No budget applies to the session: nothing to settle. */
  | { kind: 'none' }
  | { kind: 'reserved' }
  /** A budget has no room, or counts money and the model has no price: nothing was reserved anywhere. */
  | {
      kind: 'refused';
      reason: 'limit' | 'unpriced_model';
      budget: BudgetTarget;
      /** Tokens, or picodollars. */
      limit: number;
      used: number;
      /** What calls in flight hold of it. */
      reserved: number;
    };

/** A call's actual usage, settled after it (zero for a call that failed or was cancelled). */
export interface BudgetSettleRequest {
  sessionId: string;
  callKey: string;
  /** Prompt + completion tokens. */
  tokens: number;
  /** The call's cost in picodollars; null when the model has no price. */
  picoUsd: number | null;
}

/** A budget that crossed a warning threshold with this settle (exactly one settle crosses it). */
export interface BudgetCrossing {
  budgetId: number;
  scope: BudgetScope;
  unit: BudgetUnit;
  period: BudgetPeriod;
  threshold: 0.8 | 1;
  /** Tokens, or picodollars. */
  limit: number;
  /** After this settle: tokens, or picodollars. */
  used: number;
}

/** Budget enforcement as the loop sees it. Failures are the database's own (not wrapped). */
export interface BudgetPort {
  /** Reserves a call's worst case; throws `lease.lost` when the token is not the session's. */
  reserve(request: BudgetReserveRequest): Promise<BudgetReservation>;
  /** Settles a reserved call; returns the warning thresholds it crossed. */
  settle(request: BudgetSettleRequest): Promise<BudgetCrossing[]>;
  /** Gives back reservations whose holder is gone (the sweeper); returns how many. */
  releaseStale(limit: number): Promise<number>;
}

/** The thresholds `used` crossed going from `before` to `after` against `limit` (80 % and 100 %). */
export function crossedThresholds(limit: bigint, before: bigint, after: bigint): (0.8 | 1)[] {
  const crossed: (0.8 | 1)[] = [];
  if (limit <= 0n) return crossed;
  // 80 %: used × 10 ≥ limit × 8, in integers (picodollar limits pass 2^53).
  if (before * 10n < limit * 8n && after * 10n >= limit * 8n) crossed.push(0.8);
  if (before < limit && after >= limit) crossed.push(1);
  return crossed;
}
