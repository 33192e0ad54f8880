import type { UsageGroupBy, UsageQuery } from '../../core/ports/tenant-admin.js';
import { formatPicoUsd } from '../../core/pricing/usd-amount.js';
import { readUsageReport } from '../../producer/usage-report.js';
import { withStore } from '../connect.js';
import type { UsageReport, UsageTotals } from '../../producer/usage-report.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { CliUsageError, parseCommandLine, parseIntegerOption } from '../command-line.js';
import { formatTable } from '../format-table.js';

const HEADER = ['KEY', 'INPUTS', 'LLM CALLS', 'PROMPT', 'COMPLETION', 'CACHE READ', 'CACHE WRITE', 'REASONING', 'TOTAL', 'COST USD', 'UNPRICED CALLS'];

/** The CSV's columns: cost both as exact decimal USD and as integer picodollars. */
const CSV_HEADER = ['key', 'inputs', 'llm_calls', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cache_write_tokens', 'reasoning_tokens', 'total_tokens', 'cost_usd', 'cost_picousd', 'unpriced_calls'];

/** Accepted `--limit` values. */
export const USAGE_LIMIT = { min: 1, max: 10_000 } as const;

/**
 * `loopfleet usage`: what was used in `[--from, --to)` (default: this UTC month so far), of a tenant
 * and an agent if given, grouped `--by` day (default), agent, model or session, from Postgres. A table
 * with a TOTAL line; `--json` the report as one object; `--csv` one line per group with the cost as
 * exact decimal USD and picodollars (for billing; no totals line).
 */
export async function usageCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      agent: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      by: { type: 'string', default: 'day' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      csv: { type: 'boolean', default: false },
    },
  });
  if (positionals.length > 0) throw new CliUsageError(`usage takes no arguments, got "${positionals[0]!}"`);
  if (values.json && values.csv) throw new CliUsageError('give at most one of --json and --csv');
  const now = new Date();
  const query: UsageQuery = {
    groupBy: values.by as UsageGroupBy,
    from: values.from === undefined ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) : parseTime('from', values.from),
    to: values.to === undefined ? now : parseTime('to', values.to),
  };
  if (values.tenant !== undefined) query.tenant = values.tenant;
  if (values.agent !== undefined) query.agent = values.agent;
  if (values.limit !== undefined) query.limit = parseIntegerOption('limit', values.limit, USAGE_LIMIT);
  return withStore(io, async ({ store }) => {
    const report = await readUsageReport(store, query);
    io.stdout(values.json ? `${JSON.stringify(report)}\n` : values.csv ? formatUsageCsv(report) : formatUsage(report));
    if (report.truncated) io.stderr(`loopfleet usage: only the first ${report.rows.length} groups are shown (--limit); the totals cover all\n`);
    return EXIT.ok;
  });
}

/** The report as a table: a line per group, then TOTAL. */
export function formatUsage(report: UsageReport): string {
  const title = `usage ${report.from.toISOString()} to ${report.to.toISOString()} by ${report.groupBy}${report.tenant === null ? '' : `, tenant ${report.tenant}`}${report.agent === null ? '' : `, agent ${report.agent}`}\n`;
  const cells = (key: string, sums: UsageTotals): string[] => [key, ...numbers(sums), formatPicoUsd(sums.costPicoUsd), String(sums.unpricedCalls)];
  return title + formatTable(HEADER, [...report.rows.map((row) => cells(row.key, row)), cells('TOTAL', report.totals)]);
}

/** The report as CSV (RFC 4180), one line per group, costs exact. */
export function formatUsageCsv(report: UsageReport): string {
  const lines = report.rows.map((row) => [row.key, ...numbers(row), formatPicoUsd(row.costPicoUsd), row.costPicoUsd, String(row.unpricedCalls)]);
  return [CSV_HEADER, ...lines].map((line) => `${line.map(csvCell).join(',')}\r\n`).join('');
}

function numbers(sums: UsageTotals): string[] {
  return [sums.inputs, sums.llmCalls, sums.promptTokens, sums.completionTokens, sums.cachedTokens, sums.cacheWriteTokens, sums.reasoningTokens, sums.totalTokens].map(String);
}

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** An ISO 8601 date or time (`2026-11-01`, `2026-11-01T12:00:00Z`); a bare number is refused, being ambiguous. */
function parseTime(option: string, raw: string): Date {
  const date = /^\d{4}-\d{2}-\d{2}/.test(raw) ? new Date(raw) : null;
  if (date === null || !Number.isFinite(date.getTime())) throw new CliUsageError(`--${option} must be an ISO 8601 date or time such as 2026-11-01 or 2026-11-01T00:00:00Z; got ${JSON.stringify(raw)}`);
  return date;
}
