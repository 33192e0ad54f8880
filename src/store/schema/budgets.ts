import { sql } from 'drizzle-orm';
import { bigint, check, index, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/**
 * Spending caps (docs/tenants.md). A budget covers one scope — a session (and every child session
 * under it), a tenant, or a tenant's use of one agent — counts tokens or money (picodollars,
 * 10^-12 USD), over the whole life or per UTC calendar day or month. At most one budget per scope,
 * unit and period.
 */
export const budgets = pgTable(
  'budgets',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** `session | tenant | agent` (the last: a tenant's use of one agent). */
    scope: text('scope').notNull(),
    tenant: text('tenant').notNull(),
    /** The agent of an `agent` budget; '' otherwise. */
    agent: text('agent').notNull().default(''),
    /** The session of a `session` budget; '' otherwise. */
    sessionId: text('session_id').notNull().default(''),
    /** `tokens | usd`. */
    unit: text('unit').notNull(),
    /** `total | day | month`. */
    period: text('period').notNull(),
    /** The cap: tokens (prompt + completion), or picodollars. */
    limitAmount: bigint('limit_amount', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('budgets_scope_key').on(t.tenant, t.scope, t.agent, t.sessionId, t.unit, t.period),
    index('budgets_session_idx').on(t.sessionId).where(sql`${t.scope} = 'session'`),
    check('budgets_scope_valid', sql`${t.scope} in ('session', 'tenant', 'agent')`),
    check('budgets_unit_valid', sql`${t.unit} in ('tokens', 'usd')`),
    check('budgets_period_valid', sql`${t.period} in ('total', 'day', 'month')`),
    check('budgets_limit_valid', sql`${t.limitAmount} >= 0`),
    check(
      'budgets_target_valid',
      sql`(${t.scope} = 'session') = (${t.sessionId} <> '') AND (${t.scope} = 'agent') = (${t.agent} <> '')`,
    ),
  ],
);

/**
 * What a budget has used in one window (`window_start`: the UTC day or month, or the epoch for
 * `total`), and what calls in flight have reserved of it. `used + reserved` is what a new call sees.
 */
export const budgetUsage = pgTable(
  'budget_usage',
  {
    budgetId: bigint('budget_id', { mode: 'number' })
      .notNull()
      .references(() => budgets.id, { onDelete: 'cascade' }),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    used: bigint('used', { mode: 'number' }).notNull().default(0),
    reserved: bigint('reserved', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.budgetId, t.windowStart] }), check('budget_usage_reserved_valid', sql`${t.reserved} >= 0`)],
);

/**
 * One LLM call's hold on one budget, from before the call until it is settled to the call's actual
 * usage. Keyed by the session and the call; a holder that died leaves its rows behind, and whoever
 * next holds the session (or the sweeper) gives them back.
 */
export const budgetReservations = pgTable(
  'budget_reservations',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    /** The call: `<inputSeq>:<round>`. */
    callKey: text('call_key').notNull(),
    budgetId: bigint('budget_id', { mode: 'number' }).notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    leaseToken: bigint('lease_token', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.callKey, t.budgetId] }), index('budget_reservations_created_idx').on(t.createdAt)],
);
