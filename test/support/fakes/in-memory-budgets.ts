import type {
  BudgetCrossing,
  BudgetPeriod,
  BudgetPort,
  BudgetReservation,
  BudgetReserveRequest,
  BudgetScope,
  BudgetSettleRequest,
  BudgetUnit,
} from '../../../src/core/ports/budgets.js';
import { crossedThresholds } from '../../../src/core/ports/budgets.js';
import type { SessionRecord } from '../../../src/core/session-types.js';
import { leaseLost } from '../../../src/store/fencing/fence.js';

/** A budget as the fake keeps it (the `budgets` row). */
export interface FakeBudget {
  id: number;
  scope: BudgetScope;
  tenant: string;
  agent: string;
  sessionId: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /** Tokens, or picodollars. */
  limit: number;
}

interface Usage {
  used: number;
  reserved: number;
}

interface Reservation {
  sessionId: string;
  callKey: string;
  budgetId: number;
  windowStart: number;
  amount: number;
  leaseToken: number;
}

/**
 * The in-memory {@link BudgetPort}, with the semantics of migration 0010's functions (the budget
 * port contract runs against both): budgets by tenant, agent and the session's ancestor chain,
 * windows on the fake's clock, a reservation short of the worst case only when nothing else is
 * reserved, settle charging the budgets that apply now when the call's reservations were given back.
 * Sessions are read through `session` (the in-memory session store's `getSession`, synchronously).
 */
export class InMemoryBudgets implements BudgetPort {
  readonly #budgets = new Map<number, FakeBudget>();
  readonly #usage = new Map<string, Usage>();
  #reservations: Reservation[] = [];
  #nextId = 1;

  constructor(
    private readonly session: (sessionId: string) => SessionRecord | null,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Creates or replaces the budget of a scope key; returns its id (the admin API's upsert). */
  setBudget(budget: Omit<FakeBudget, 'id' | 'agent' | 'sessionId'> & { agent?: string; sessionId?: string }): number {
    const agent = budget.agent ?? '';
    const sessionId = budget.sessionId ?? '';
    const existing = [...this.#budgets.values()].find(
      (b) => b.tenant === budget.tenant && b.scope === budget.scope && b.agent === agent && b.sessionId === sessionId && b.unit === budget.unit && b.period === budget.period,
    );
    const id = existing?.id ?? this.#nextId++;
    this.#budgets.set(id, Object.assign({}, budget, { id, agent, sessionId }));
    return id;
  }

  /** A budget's current window: used and reserved (tokens, or picodollars). */
  usage(budgetId: number): Usage {
    const budget = this.#budgets.get(budgetId);
    if (budget === undefined) return { used: 0, reserved: 0 };
    return Object.assign({}, this.#usage.get(usageKey(budgetId, windowStart(budget.period, this.now()))) ?? { used: 0, reserved: 0 });
  }

  async reserve(request: BudgetReserveRequest): Promise<BudgetReservation> {
    const session = this.session(request.sessionId);
    if (session === null || session.lease.token !== request.leaseToken) throw leaseLost(request.sessionId, request.leaseToken, 'budget reserve');
    if (![...this.#budgets.values()].some((b) => b.tenant === session.tenant)) return { kind: 'none' };
    // One call per session at a time: anything this session still holds is given back first.
    for (const old of this.#reservations.filter((r) => r.sessionId === request.sessionId)) this.#row(old.budgetId, old.windowStart).reserved -= old.amount;
    this.#reservations = this.#reservations.filter((r) => r.sessionId !== request.sessionId);
    const now = this.now();
    const grants: Reservation[] = [];
    for (const budget of this.#applicable(session)) {
      const start = windowStart(budget.period, now);
      const row = this.#row(budget.id, start);
      const target = { budgetId: budget.id, scope: budget.scope, tenant: budget.tenant, agent: budget.agent, sessionId: budget.sessionId, unit: budget.unit, period: budget.period, windowStart: new Date(start).toISOString() };
      const refusal = { kind: 'refused' as const, budget: target, limit: budget.limit, used: row.used, reserved: row.reserved };
      if (budget.unit === 'usd' && request.picoUsd === null) return Object.assign(refusal, { reason: 'unpriced_model' as const });
      const need = Math.max(0, Math.ceil(budget.unit === 'tokens' ? request.tokens : (request.picoUsd ?? 0)));
      const left = budget.limit - row.used - row.reserved;
      if (left <= 0 || (left < need && row.reserved > 0)) return Object.assign(refusal, { reason: 'limit' as const });
      grants.push({ sessionId: request.sessionId, callKey: request.callKey, budgetId: budget.id, windowStart: start, amount: Math.min(need, left), leaseToken: request.leaseToken });
    }
    if (grants.length === 0) return { kind: 'none' };
    for (const grant of grants) this.#row(grant.budgetId, grant.windowStart).reserved += grant.amount;
    this.#reservations.push(...grants);
    return { kind: 'reserved' };
  }

  async settle(request: BudgetSettleRequest): Promise<BudgetCrossing[]> {
    const held = this.#reservations.filter((r) => r.sessionId === request.sessionId && r.callKey === request.callKey);
    this.#reservations = this.#reservations.filter((r) => !(r.sessionId === request.sessionId && r.callKey === request.callKey));
    const charges: { budget: FakeBudget; windowStart: number; amount: number; charge: number }[] = [];
    for (const r of held) {
      const budget = this.#budgets.get(r.budgetId);
      if (budget === undefined) continue;
      charges.push({ budget, windowStart: r.windowStart, amount: r.amount, charge: budget.unit === 'tokens' ? request.tokens : (request.picoUsd ?? r.amount) });
    }
    const session = this.session(request.sessionId);
    if (held.length === 0 && session !== null && (request.tokens > 0 || (request.picoUsd ?? 0) > 0)) {
      // What was spent was spent: a call whose reservations were given back is still charged.
      for (const budget of this.#applicable(session)) {
        charges.push({ budget, windowStart: windowStart(budget.period, this.now()), amount: 0, charge: budget.unit === 'tokens' ? request.tokens : (request.picoUsd ?? 0) });
      }
    }
    const crossings: BudgetCrossing[] = [];
    for (const { budget, windowStart: start, amount, charge } of charges) {
      const row = this.#row(budget.id, start);
      const before = row.used;
      row.used += charge;
      row.reserved = Math.max(0, row.reserved - amount);
      for (const threshold of crossedThresholds(BigInt(budget.limit), BigInt(before), BigInt(row.used))) {
        crossings.push({ budgetId: budget.id, scope: budget.scope, unit: budget.unit, period: budget.period, threshold, limit: budget.limit, used: row.used });
      }
    }
    return crossings;
  }

  async releaseStale(limit: number): Promise<number> {
    const now = this.now();
    const stale = this.#reservations
      .filter((r) => {
        const session = this.session(r.sessionId);
        return session === null || session.lease.token !== r.leaseToken || session.lease.expiresAt === null || session.lease.expiresAt.getTime() <= now;
      })
      .slice(0, limit);
    for (const r of stale) this.#row(r.budgetId, r.windowStart).reserved = Math.max(0, this.#row(r.budgetId, r.windowStart).reserved - r.amount);
    this.#reservations = this.#reservations.filter((r) => !stale.includes(r));
    return stale.length;
  }

  #applicable(session: SessionRecord): FakeBudget[] {
    const chain = new Set<string>([session.id]);
    for (let parent = session.parentSessionId; parent !== null && !chain.has(parent); ) {
      chain.add(parent);
      parent = this.session(parent)?.parentSessionId ?? null;
    }
    return [...this.#budgets.values()]
      .filter((b) => b.tenant === session.tenant && (b.scope === 'tenant' || (b.scope === 'agent' && b.agent === session.agent) || (b.scope === 'session' && chain.has(b.sessionId))))
      .sort((a, b) => a.id - b.id);
  }

  #row(budgetId: number, start: number): Usage {
    const key = usageKey(budgetId, start);
    let row = this.#usage.get(key);
    if (row === undefined) {
      row = { used: 0, reserved: 0 };
      this.#usage.set(key, row);
    }
    return row;
  }
}

function usageKey(budgetId: number, start: number): string {
  return `${budgetId}@${start}`;
}

/** The window's start in ms: the UTC day or month, or the epoch for `total`. */
function windowStart(period: BudgetPeriod, now: number): number {
  const at = new Date(now);
  if (period === 'day') return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (period === 'month') return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
  return 0;
}
