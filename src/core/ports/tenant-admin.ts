/**
 * The records of the operator surfaces (docs/budgets.md, docs/usage.md, docs/client.md): budgets as
 * an operator sets and reads them, usage reports, and tenant settings. Amounts the store hands over
 * are exact integers as decimal text (tokens, or picodollars: 10^-12 USD), because a sum of
 * picodollars passes 2^53 at about $9,000; the client turns them into USD numbers at its edge.
 */

/** What a budget covers: one session (and every child session under it), a tenant, or a tenant's use of one agent. */
export const BUDGET_SCOPES = ['session', 'tenant', 'agent'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

/** What a budget counts: tokens (prompt + completion) or money. */
export const BUDGET_UNITS = ['tokens', 'usd'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** The window a budget's use is counted over: the whole life, or a UTC calendar day or month. */
export const BUDGET_PERIODS = ['total', 'day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** A budget to create or replace, keyed by (tenant, scope, agent, sessionId, unit, period). */
export interface BudgetWrite {
  scope: BudgetScope;
  /** The tenant. For a `session` budget: null takes the session's; another than the session's is `session.not_found`. */
  tenant: string | null;
  /** The agent of an `agent` budget; '' for the other scopes. */
  agent: string;
  /** The session of a `session` budget; '' for the other scopes. */
  sessionId: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /** The cap: tokens, or picodollars; a non-negative integer as decimal text. */
  limitAmount: string;
}

/** A stored budget and where its current window stands. */
export interface BudgetRecord {
  id: number;
  scope: BudgetScope;
  tenant: string;
  /** '' unless the scope is `agent`. */
  agent: string;
  /** '' unless the scope is `session`. */
  sessionId: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /** The cap, in tokens or picodollars (integer text). */
  limitAmount: string;
  /** Start of the current window: the UTC day or month now, or the epoch for `total`. */
  windowStart: Date;
  /** What settled calls used in the current window (integer text, in the budget's unit). */
  usedAmount: string;
  /** What calls in flight hold of the current window now. */
  reservedAmount: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Which budgets `listBudgets` answers. Every filter is optional. */
export interface ListBudgetsOptions {
  tenant?: string;
  scope?: BudgetScope;
  agent?: string;
  sessionId?: string;
  /** Budgets per page, by id: 1–1000, default 1000. */
  limit?: number;
  /** Only budgets with a larger id (the last id of the page before). */
  afterId?: number;
}

/** How `usageReport` groups usage rows: by UTC day, agent, `provider:model`, or session. */
export const USAGE_GROUPS = ['day', 'agent', 'model', 'session'] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];

/** A usage report's question: the rounds recorded in `[from, to)`, of a tenant and an agent if given. */
export interface UsageQuery {
  tenant?: string;
  agent?: string;
  /** Inclusive. A `Date`, ISO 8601 text or epoch milliseconds. */
  from: Date | string | number;
  /** Exclusive. */
  to: Date | string | number;
  groupBy: UsageGroupBy;
  /** Groups at most: 1–10,000, default 1,000 (the totals cover every group regardless). */
  limit?: number;
}

/** The sums of one group (or of all of them). Costs are exact picodollars as integer text. */
export interface UsageSums {
  llmCalls: number;
  /** Inputs with usage in the group (an input counts in each group it has rounds in). */
  inputs: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  /** The priced rounds' cost, picodollars (integer text). */
  costPicoUsd: string;
  /** LLM calls of rounds whose model had no price (their cost is not in `costPicoUsd`). */
  unpricedCalls: number;
}

/** The store's answer: the groups in key order, the totals over every group, whether groups were cut at the limit. */
export interface UsageReportRows {
  rows: Array<UsageSums & { key: string }>;
  totals: UsageSums;
  truncated: boolean;
}

/** A tenant's dispatch settings as an operator changes them; an absent field keeps its value, null removes a cap. */
export interface TenantSettingsPatch {
  /** Share of the workers when tenants compete, relative to others' (1–10,000, default 100). */
  weight?: number;
  /** Inputs of the tenant running at once across the fleet (1–1,000,000); null: no cap. */
  maxConcurrentInputs?: number | null;
  /** Inputs of the tenant admitted per second (above 0, at most 1,000,000); null: no cap. */
  maxInputsPerSecond?: number | null;
}

/** A tenant's stored settings; a tenant without a row runs with weight 100 and no caps. */
export interface TenantSettingsRecord {
  tenant: string;
  weight: number;
  maxConcurrentInputs: number | null;
  maxInputsPerSecond: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Which tenants' settings `listTenantSettings` answers: by name, a page after `after`. */
export interface ListTenantSettingsOptions {
  /** 1–1000, default 1000. */
  limit?: number;
  /** Only tenants whose name sorts after this one. */
  after?: string;
}
