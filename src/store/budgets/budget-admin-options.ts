import { InputInvalidError } from '../../core/errors/index.js';
import { BUDGET_PERIODS, BUDGET_SCOPES, BUDGET_UNITS, type BudgetScope, type BudgetWrite, type ListBudgetsOptions } from '../../core/ports/tenant-admin.js';
import { assertAgentName } from '../../fleet/agent-name.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertTenant } from '../../fleet/tenant-name.js';
import { isPlainObject } from '../postgres/arguments.js';

/** Budgets per list page when none is asked for, and the most a page holds. */
export const MAX_BUDGET_PAGE = 1000;

/** The largest amount a `bigint` column holds: 2^63 − 1 (tokens, or picodollars: about $9.2 million). */
export const MAX_BUDGET_AMOUNT = 9_223_372_036_854_775_807n;

/** {@link ListBudgetsOptions} checked (null: no such filter). */
export interface ResolvedBudgetList {
  tenant: string | null;
  scope: BudgetScope | null;
  agent: string | null;
  sessionId: string | null;
  limit: number;
  afterId: number;
}

const WRITE_KEYS = new Set(['scope', 'tenant', 'agent', 'sessionId', 'unit', 'period', 'limitAmount']);
const LIST_KEYS = new Set(['tenant', 'scope', 'agent', 'sessionId', 'limit', 'afterId']);

/**
 * Checks a budget write before any database work: `input.invalid` naming the field. The scope decides
 * which target is given: an `agent` budget names its agent, a `session` budget its session (and no
 * agent), a `tenant` budget neither. Only a `session` budget may leave the tenant out (null).
 */
export function resolveBudgetWrite(value: unknown): BudgetWrite {
  const o = knownFields(value, 'budget', WRITE_KEYS);
  const scope = oneOf(o.scope, 'scope', BUDGET_SCOPES);
  const tenant = o.tenant === null || o.tenant === undefined ? null : assertTenant(o.tenant);
  if (tenant === null && scope !== 'session') throw new InputInvalidError(`a ${scope} budget needs a tenant`, { details: { field: 'tenant' } });
  const agent = scope === 'agent' ? assertAgentName(o.agent) : forbidden(o.agent, 'agent', scope);
  const sessionId = scope === 'session' ? assertSessionId(o.sessionId) : forbidden(o.sessionId, 'sessionId', scope);
  return {
    scope,
    tenant,
    agent,
    sessionId,
    unit: oneOf(o.unit, 'unit', BUDGET_UNITS),
    period: oneOf(o.period, 'period', BUDGET_PERIODS),
    limitAmount: assertAmount(o.limitAmount, 'limitAmount'),
  };
}

/** Checks the options of `listBudgets`. */
export function resolveBudgetList(options: ListBudgetsOptions | undefined): ResolvedBudgetList {
  const o = knownFields(options ?? {}, 'budget list options', LIST_KEYS);
  return {
    tenant: o.tenant === undefined ? null : assertTenant(o.tenant),
    scope: o.scope === undefined ? null : oneOf(o.scope, 'scope', BUDGET_SCOPES),
    agent: o.agent === undefined ? null : assertAgentName(o.agent),
    sessionId: o.sessionId === undefined ? null : assertSessionId(o.sessionId),
    limit: o.limit === undefined ? MAX_BUDGET_PAGE : wholeNumber(o.limit, 'limit', 1, MAX_BUDGET_PAGE),
    afterId: o.afterId === undefined ? 0 : wholeNumber(o.afterId, 'afterId', 0, Number.MAX_SAFE_INTEGER),
  };
}

/** A budget id as `createBudget` returned it: a positive safe integer. */
export function assertBudgetId(value: unknown): number {
  return wholeNumber(value, 'budget id', 1, Number.MAX_SAFE_INTEGER);
}

/** A non-negative integer as decimal text (no sign, no leading zeros), at most {@link MAX_BUDGET_AMOUNT}. */
export function assertAmount(value: unknown, what: string): string {
  if (typeof value === 'string' && /^(0|[1-9]\d{0,18})$/.test(value) && BigInt(value) <= MAX_BUDGET_AMOUNT) return value;
  throw new InputInvalidError(`${what} must be a whole number from 0 to ${MAX_BUDGET_AMOUNT} as decimal text`, {
    details: { field: what, received: typeof value === 'string' ? value.slice(0, 40) : typeof value },
  });
}

function knownFields(value: unknown, what: string, keys: ReadonlySet<string>): Record<string, unknown> {
  if (!isPlainObject(value)) throw new InputInvalidError(`${what} must be an object`);
  const unknown = Object.keys(value).filter((key) => !keys.has(key));
  if (unknown.length > 0) throw new InputInvalidError(`${what} has unknown field(s) ${unknown.slice(0, 10).join(', ')}`, { details: { fields: unknown.slice(0, 10) } });
  return value;
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if ((allowed as readonly unknown[]).includes(value)) return value as T;
  throw new InputInvalidError(`${field} must be one of ${allowed.join(', ')}`, { details: { field, received: String(value).slice(0, 64) } });
}

/** '' for a target the scope does not take; anything given is refused rather than ignored. */
function forbidden(value: unknown, field: string, scope: BudgetScope): string {
  if (value === undefined || value === null || value === '') return '';
  throw new InputInvalidError(`a ${scope} budget takes no ${field}`, { details: { field } });
}

function wholeNumber(value: unknown, field: string, min: number, max: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  throw new InputInvalidError(`${field} must be an integer from ${min} to ${max}`, { details: { field, received: String(value).slice(0, 64) } });
}
