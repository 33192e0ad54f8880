import { MAX_TIMER_DELAY_DAYS } from '../limits.js';
import { JSON_OPTION, type CommandSpec } from './types.js';

/** Timers, budgets, usage and tenants. */
export const OPERATOR_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'timer',
    group: 'Timers',
    args: '<session> <note>',
    summary: 'Schedule a durable timer: the session gets the note as a <timer> message',
    options: [
      { flags: '--in <duration>', description: 'due after this long: 90s, 5m, 2h, 1d (bare digits: ms)' },
      { flags: '--at <time>', description: `an ISO 8601 time within ${MAX_TIMER_DELAY_DAYS} days of now (a past time fires at once)` },
      { flags: '--every <duration>', description: 'fire again this often (at least 1s)' },
      { flags: '--id <timer>', description: 'its id (1 to 100 characters); a repeated id returns the stored timer' },
      JSON_OPTION,
    ],
    details: 'Give exactly one of --in and --at. Prints "scheduled <session> timer <id> due <time>".',
    load: async () => (await import('../commands/timers.js')).timerCommand,
  },
  {
    name: 'timers',
    group: 'Timers',
    args: '<session>',
    summary: 'List the armed timers, soonest first',
    options: [{ flags: '--all', description: 'every timer, newest first' }, JSON_OPTION],
    load: async () => (await import('../commands/timers.js')).timersCommand,
  },
  {
    name: 'cancel-timer',
    group: 'Timers',
    args: '<session> <timer>',
    summary: 'Cancel an armed timer',
    options: [JSON_OPTION],
    load: async () => (await import('../commands/timers.js')).cancelTimerCommand,
  },
  {
    name: 'budget',
    group: 'Operators',
    args: '<action> [args...]',
    summary: 'Spending caps on a session, a tenant or a tenant\'s agent: set, get, list, delete',
    options: [JSON_OPTION],
    passThrough: true,
    details: `  budget set --scope tenant|agent|session [--tenant <t>] [--agent <a>] [--session <id>]
             --unit tokens|usd --period total|day|month --limit <n>
  budget get <id>
  budget list [--tenant <t>] [--scope <s>] [--agent <a>] [--session <id>]
  budget delete <id>
set creates the budget or replaces the limit of the one with the same scope, target, unit and
period. --limit: tokens, or USD with at most 12 decimals (0.01). A session budget takes its
session's tenant. get and list show the current window (used, reserved, remaining). See docs/budgets.md.`,
    load: async () => (await import('../commands/budget.js')).budgetCommand,
  },
  {
    name: 'usage',
    group: 'Operators',
    args: '',
    summary: 'Tokens and cost used, grouped by day, agent, model or session',
    options: [
      { flags: '--from <date>', description: 'start of the period (default: the first of this UTC month)' },
      { flags: '--to <date>', description: 'end of the period, exclusive (default: now)' },
      { flags: '--tenant <tenant>', description: 'only this tenant' },
      { flags: '--agent <name>', description: 'only this agent' },
      { flags: '--by <group>', description: 'day, agent, model or session (default day)' },
      { flags: '--limit <n>', description: 'groups shown, 1 to 10000 (default 1000; the totals cover all)' },
      { flags: '--csv', description: 'a line per group, cost as exact decimal USD and picodollars (for billing)' },
      JSON_OPTION,
    ],
    details: 'Ends with a TOTAL line. See docs/usage.md.',
    load: async () => (await import('../commands/usage.js')).usageCommand,
  },
  {
    name: 'tenant',
    group: 'Operators',
    args: '<action> [args...]',
    summary: "A tenant's dispatch settings: set, get, list, delete",
    options: [JSON_OPTION],
    passThrough: true,
    details: `  tenant set <tenant> [--weight <n>] [--max-concurrent <n>|none] [--max-rate <n>|none]
  tenant get <tenant>
  tenant list
  tenant delete <tenant>
set changes only the options given: the share of the workers (weight 1 to 10000, default 100),
inputs running at once across the fleet, inputs admitted per second (none: no cap). get prints the
defaults for a tenant without settings; delete returns to them (not found: it had none).`,
    load: async () => (await import('../commands/tenant.js')).tenantCommand,
  },
];
