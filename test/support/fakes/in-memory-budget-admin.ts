import { SessionNotFoundError } from '../../../src/core/errors/index.js';
import type { BudgetPeriod, BudgetRecord, ListBudgetsOptions } from '../../../src/core/ports/tenant-admin.js';
import type { SessionRecord } from '../../../src/core/session-types.js';
import { assertBudgetId, resolveBudgetList, resolveBudgetWrite } from '../../../src/store/budgets/budget-admin-options.js';

type StoredBudget = Omit<BudgetRecord, 'windowStart' | 'usedAmount' | 'reservedAmount'>;

/** The start of a period's window at `now`, as the Postgres store computes it (UTC day or month, or the epoch). */
export function windowStart(period: BudgetPeriod, now: number): Date {
  const at = new Date(now);
  if (period === 'day') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  if (period === 'month') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  return new Date(0);
}

/**
 * The `budgets` and `budget_usage` tables in memory, behind the fake store's budget admin methods: the
 * same checks (the Postgres store's own resolvers), upsert by key, ids in creation order, use per
 * window. `recordUse` stands in for enforcement in tests.
 */
export class InMemoryBudgetAdmin {
  readonly #budgets = new Map<number, StoredBudget>();
  /** `<budget id>:<window start ms>` → use. */
  readonly #use = new Map<string, { used: bigint; reserved: bigint }>();
  #lastId = 0;

  constructor(
    private readonly now: () => number,
    private readonly session: (id: string) => SessionRecord | undefined,
  ) {}

  set(value: unknown): BudgetRecord {
    const write = resolveBudgetWrite(value);
    let tenant = write.tenant;
    if (write.scope === 'session') {
      const session = this.session(write.sessionId);
      if (session === undefined || (tenant !== null && session.tenant !== tenant)) {
        throw new SessionNotFoundError(`session ${write.sessionId} does not exist`, { details: { sessionId: write.sessionId } });
      }
      tenant = session.tenant;
    }
    const key = { scope: write.scope, tenant: tenant!, agent: write.agent, sessionId: write.sessionId, unit: write.unit, period: write.period };
    const at = new Date(this.now());
    const existing = [...this.#budgets.values()].find((b) => b.scope === key.scope && b.tenant === key.tenant && b.agent === key.agent && b.sessionId === key.sessionId && b.unit === key.unit && b.period === key.period);
    if (existing !== undefined) {
      existing.limitAmount = write.limitAmount;
      existing.updatedAt = at;
      return this.#view(existing);
    }
    this.#lastId += 1;
    const budget: StoredBudget = Object.assign({ id: this.#lastId, limitAmount: write.limitAmount, createdAt: at, updatedAt: at }, key);
    this.#budgets.set(budget.id, budget);
    return this.#view(budget);
  }

  get(id: unknown): BudgetRecord | null {
    const budget = this.#budgets.get(assertBudgetId(id));
    return budget === undefined ? null : this.#view(budget);
  }

  list(options: ListBudgetsOptions | undefined): BudgetRecord[] {
    const list = resolveBudgetList(options);
    return [...this.#budgets.values()]
      .filter(
        (b) =>
          b.id > list.afterId &&
          (list.tenant === null || b.tenant === list.tenant) &&
          (list.scope === null || b.scope === list.scope) &&
          (list.agent === null || b.agent === list.agent) &&
          (list.sessionId === null || b.sessionId === list.sessionId),
      )
      .sort((a, b) => a.id - b.id)
      .slice(0, list.limit)
      .map((b) => this.#view(b));
  }

  delete(id: unknown): boolean {
    const budgetId = assertBudgetId(id);
    for (const key of this.#use.keys()) if (key.startsWith(`${budgetId}:`)) this.#use.delete(key);
    return this.#budgets.delete(budgetId);
  }

  /** Drops the session budgets of these sessions (deleted with them). */
  dropSessions(sessionIds: readonly string[]): void {
    for (const budget of [...this.#budgets.values()]) if (budget.scope === 'session' && sessionIds.includes(budget.sessionId)) this.delete(budget.id);
  }

  /** Sets a budget's use in its current window (what enforcement would have written). */
  recordUse(id: number, used: bigint, reserved = 0n): void {
    const budget = this.#budgets.get(id);
    if (budget === undefined) throw new Error(`no budget ${id}`);
    this.#use.set(`${id}:${windowStart(budget.period, this.now()).getTime()}`, { used, reserved });
  }

  #view(budget: StoredBudget): BudgetRecord {
    const start = windowStart(budget.period, this.now());
    const use = this.#use.get(`${budget.id}:${start.getTime()}`);
    return Object.assign(structuredClone(budget), { windowStart: start, usedAmount: String(use?.used ?? 0n), reservedAmount: String(use?.reserved ?? 0n) });
  }
}
