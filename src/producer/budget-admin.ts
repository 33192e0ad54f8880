import { InputInvalidError } from '../core/errors/index.js';
import { formatPicoUsd, picoTextToUsd, usdToPico } from '../core/pricing/usd-amount.js';
import type { ClientStore } from '../core/ports/client-store.js';
import { BUDGET_UNITS, type BudgetPeriod, type BudgetRecord, type BudgetScope, type BudgetUnit, type BudgetWrite, type ListBudgetsOptions } from '../core/ports/tenant-admin.js';
import { MAX_BUDGET_AMOUNT } from '../store/budgets/budget-admin-options.js';
import { plainObject } from './add-request.js';

/** What `budgets.set` takes: the scope and its target, the unit and period, and the limit. */
export interface BudgetParams {
  scope: BudgetScope;
  /** Required, except for a `session` budget (which takes its session's; naming another is `session.not_found`). */
  tenant?: string;
  /** The agent of an `agent` budget (only then). */
  agent?: string;
  /** The session of a `session` budget (only then). */
  sessionId?: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /**
   * The cap: tokens (prompt + completion; a whole number) for `tokens`, USD for `usd` — a number or
   * decimal text with at most 12 decimals (picodollars), at most 9,223,372.036854775807.
   */
  limit: number | string;
}

/** A budget as the client shows it: amounts in its unit (tokens, or USD), and exactly (tokens, or picodollars as text). */
export interface Budget {
  id: number;
  scope: BudgetScope;
  tenant: string;
  /** The agent of an `agent` budget; null otherwise. */
  agent: string | null;
  /** The session of a `session` budget; null otherwise. */
  sessionId: string | null;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /** The cap, in tokens or USD. */
  limit: number;
  /** Used in the current window by settled calls, in tokens or USD. */
  used: number;
  /** Held by calls in flight in the current window. */
  reserved: number;
  /** What a new call may still reserve: `limit − used − reserved`, never below 0. */
  remaining: number;
  /** Start of the current window (UTC day or month; the epoch for `total`). */
  windowStart: Date;
  /** The same amounts exactly: tokens, or picodollars, as integer text. */
  exact: { limit: string; used: string; reserved: string; remaining: string };
  createdAt: Date;
  updatedAt: Date;
}

const SET_KEYS = new Set(['scope', 'tenant', 'agent', 'sessionId', 'unit', 'period', 'limit']);

/**
 * `queue.budgets`: spending caps on a session, a tenant or a tenant's agent (docs/budgets.md).
 * Setting one takes effect at the next LLM call any worker makes under it.
 */
export class BudgetAdmin {
  constructor(
    private readonly deps: {
      store: ClientStore;
      /** Runs an operation unless the queue is closed, and lets `close()` wait for it. */
      run: <T>(work: () => Promise<T>) => Promise<T>;
    },
  ) {}

  /**
   * Creates the budget, or replaces the limit of the one with the same scope, target, unit and period
   * (what it used stays). Throws `input.invalid` for bad fields (before anything is written) and
   * `session.not_found` for a session budget of a session that does not exist.
   */
  async set(params: BudgetParams): Promise<Budget> {
    const write = toBudgetWrite(params);
    return this.deps.run(async () => budgetView(await this.deps.store.setBudget(write)));
  }

  /** One budget by id, or null. */
  async get(id: number): Promise<Budget | null> {
    return this.deps.run(async () => {
      const record = await this.deps.store.getBudget(id);
      return record === null ? null : budgetView(record);
    });
  }

  /** Budgets by id, filtered by `tenant`, `scope`, `agent`, `sessionId`; `limit` (≤ 1000) and `afterId` page. */
  async list(options: ListBudgetsOptions = {}): Promise<Budget[]> {
    return this.deps.run(async () => (await this.deps.store.listBudgets(options)).map(budgetView));
  }

  /** Deletes a budget with its use; false when there was none. */
  async delete(id: number): Promise<boolean> {
    return this.deps.run(() => this.deps.store.deleteBudget(id));
  }
}

/** Checks `budgets.set`'s params and turns the limit into the stored amount (picodollars for USD). */
export function toBudgetWrite(params: BudgetParams): BudgetWrite {
  const o = plainObject(params, 'budget', SET_KEYS);
  const unit = o.unit;
  if (!(BUDGET_UNITS as readonly unknown[]).includes(unit)) throw new InputInvalidError(`unit must be one of ${BUDGET_UNITS.join(', ')}`, { details: { field: 'unit' } });
  return {
    scope: o.scope as BudgetScope,
    tenant: o.tenant === undefined ? null : (o.tenant as string),
    agent: o.agent === undefined ? '' : (o.agent as string),
    sessionId: o.sessionId === undefined ? '' : (o.sessionId as string),
    unit: unit as BudgetUnit,
    period: o.period as BudgetPeriod,
    limitAmount: unit === 'usd' ? usdLimit(o.limit) : tokenLimit(o.limit),
  };
}

function usdLimit(value: unknown): string {
  const pico = usdToPico(value);
  if (pico !== null && pico <= MAX_BUDGET_AMOUNT) return pico.toString();
  throw new InputInvalidError(`limit must be a USD amount from 0 to ${formatPicoUsd(MAX_BUDGET_AMOUNT)} with at most 12 decimals`, {
    details: { field: 'limit', received: String(value).slice(0, 64) },
  });
}

function tokenLimit(value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^(0|[1-9]\d{0,18})$/.test(value) && BigInt(value) <= MAX_BUDGET_AMOUNT) return value;
  throw new InputInvalidError('limit must be a whole number of tokens, 0 or more', { details: { field: 'limit', received: String(value).slice(0, 64) } });
}

/** The stored record in the budget's unit. */
export function budgetView(record: BudgetRecord): Budget {
  const remaining = BigInt(record.limitAmount) - BigInt(record.usedAmount) - BigInt(record.reservedAmount);
  const exact = { limit: record.limitAmount, used: record.usedAmount, reserved: record.reservedAmount, remaining: (remaining > 0n ? remaining : 0n).toString() };
  const amount = record.unit === 'usd' ? picoTextToUsd : Number;
  return {
    id: record.id,
    scope: record.scope,
    tenant: record.tenant,
    agent: record.agent === '' ? null : record.agent,
    sessionId: record.sessionId === '' ? null : record.sessionId,
    unit: record.unit,
    period: record.period,
    limit: amount(exact.limit),
    used: amount(exact.used),
    reserved: amount(exact.reserved),
    remaining: amount(exact.remaining),
    windowStart: record.windowStart,
    exact,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
