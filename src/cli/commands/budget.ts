import type { BudgetPeriod, BudgetScope, BudgetUnit, ListBudgetsOptions } from '../../core/ports/tenant-admin.js';
import { formatPicoUsd } from '../../core/pricing/usd-amount.js';
import type { Budget, BudgetParams } from '../../producer/budget-admin.js';
import { withStore, type StoreClient } from '../connect.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { CliUsageError, parseCommandLine, parseIntegerOption } from '../command-line.js';
import { formatTable } from '../format-table.js';

const USAGE = `loopfleet budget set --scope tenant|agent|session [--tenant <t>] [--agent <a>] [--session <id>] --unit tokens|usd --period total|day|month --limit <n> [--json]
       loopfleet budget get <id> [--json]
       loopfleet budget list [--tenant <t>] [--scope <s>] [--agent <a>] [--session <id>] [--json]
       loopfleet budget delete <id> [--json]`;

const HEADER = ['ID', 'SCOPE', 'TENANT', 'TARGET', 'UNIT', 'PERIOD', 'LIMIT', 'USED', 'RESERVED', 'REMAINING', 'WINDOW'];
const ID_RANGE = { min: 1, max: Number.MAX_SAFE_INTEGER };

/**
 * `loopfleet budget set|get|list|delete`: spending caps (docs/budgets.md). `set` creates the budget or
 * replaces the limit of the one with the same scope, target, unit and period; `--limit` is tokens, or
 * USD (decimal, up to 12 places). Amounts print exactly; `--json` prints the budgets as JSON, one a line.
 */
export async function budgetCommand(args: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'set':
      return setBudget(rest, io);
    case 'get':
      return getBudget(rest, io);
    case 'list':
      return listBudgets(rest, io);
    case 'delete':
      return deleteBudget(rest, io);
    default:
      io.stderr(`loopfleet budget: expected set, get, list or delete${action === undefined ? '' : `, got "${action}"`}\nusage: ${USAGE}\n`);
      return EXIT.usage;
  }
}

async function setBudget(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: {
      scope: { type: 'string' },
      tenant: { type: 'string' },
      agent: { type: 'string' },
      session: { type: 'string' },
      unit: { type: 'string' },
      period: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length > 0) throw new CliUsageError(`budget set takes no arguments, got "${positionals[0]!}"`);
  const { scope, unit, period, limit } = values;
  if (scope === undefined || unit === undefined || period === undefined || limit === undefined) throw new CliUsageError('budget set needs --scope, --unit, --period and --limit');
  const params: BudgetParams = { scope: scope as BudgetScope, unit: unit as BudgetUnit, period: period as BudgetPeriod, limit };
  if (values.tenant !== undefined) params.tenant = values.tenant;
  if (values.agent !== undefined) params.agent = values.agent;
  if (values.session !== undefined) params.sessionId = values.session;
  return withStore(io, async (queue: StoreClient) => {
    const budget = await queue.budgets.set(params);
    io.stdout(values.json ? `${JSON.stringify(budget)}\n` : `set budget ${budget.id}: ${describe(budget)}\n`);
    return EXIT.ok;
  });
}

async function getBudget(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const id = onlyId(positionals, 'get');
  return withStore(io, async (queue: StoreClient) => {
    const budget = await queue.budgets.get(id);
    if (budget === null) {
      io.stderr(`loopfleet budget: no budget ${id}\n`);
      return EXIT.notFound;
    }
    io.stdout(values.json ? `${JSON.stringify(budget)}\n` : formatBudgets([budget]));
    return EXIT.ok;
  });
}

async function listBudgets(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, scope: { type: 'string' }, agent: { type: 'string' }, session: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals.length > 0) throw new CliUsageError(`budget list takes no arguments, got "${positionals[0]!}"`);
  const filter: ListBudgetsOptions = {};
  if (values.tenant !== undefined) filter.tenant = values.tenant;
  if (values.scope !== undefined) filter.scope = values.scope as BudgetScope;
  if (values.agent !== undefined) filter.agent = values.agent;
  if (values.session !== undefined) filter.sessionId = values.session;
  return withStore(io, async (queue: StoreClient) => {
    const budgets: Budget[] = [];
    for (let afterId = 0; ; ) {
      const page = await queue.budgets.list(Object.assign({}, filter, { afterId }));
      budgets.push(...page);
      if (page.length < 1000) break;
      afterId = page.at(-1)!.id;
    }
    if (values.json) for (const budget of budgets) io.stdout(`${JSON.stringify(budget)}\n`);
    else io.stdout(budgets.length === 0 ? 'no budgets\n' : formatBudgets(budgets));
    return EXIT.ok;
  });
}

async function deleteBudget(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const id = onlyId(positionals, 'delete');
  return withStore(io, async (queue: StoreClient) => {
    if (!(await queue.budgets.delete(id))) {
      io.stderr(`loopfleet budget: no budget ${id}\n`);
      return EXIT.notFound;
    }
    io.stdout(values.json ? `${JSON.stringify({ id, deleted: true })}\n` : `deleted budget ${id}\n`);
    return EXIT.ok;
  });
}

/** The budgets as a table, amounts exact (USD with a `$`). */
export function formatBudgets(budgets: readonly Budget[]): string {
  return formatTable(HEADER, budgets.map((b) => [String(b.id), b.scope, b.tenant, target(b), b.unit, b.period, amount(b, b.exact.limit), amount(b, b.exact.used), amount(b, b.exact.reserved), amount(b, b.exact.remaining), b.windowStart.toISOString()]));
}

function describe(b: Budget): string {
  return `${b.scope} ${b.tenant}${b.scope === 'tenant' ? '' : ` ${target(b)}`} ${b.unit} per ${b.period}, limit ${amount(b, b.exact.limit)}, used ${amount(b, b.exact.used)}`;
}

function target(b: Budget): string {
  return b.agent ?? b.sessionId ?? '-';
}

function amount(b: Budget, exact: string): string {
  return b.unit === 'usd' ? `$${formatPicoUsd(exact)}` : exact;
}

function onlyId(positionals: string[], action: string): number {
  const [raw, ...extra] = positionals;
  if (raw === undefined || extra.length > 0) throw new CliUsageError(`budget ${action} expects one budget id`);
  return parseIntegerOption('id', raw, ID_RANGE);
}

