import { z } from 'zod';
import { StateCorruptError } from '../../core/errors/index.js';
import type { UsageReportRows, UsageSums } from '../../core/ports/tenant-admin.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { resolveUsageQuery } from './usage-report-options.js';
import { usageReportQuery } from './usage-report-sql.js';

const count = z.number().int().nonnegative();

const groupRowSchema = z.object({
  key: z.string().nullable(),
  isTotal: z.boolean(),
  llmCalls: count,
  inputs: count,
  promptTokens: count,
  completionTokens: count,
  cachedTokens: count,
  cacheWriteTokens: count,
  reasoningTokens: count,
  totalTokens: count,
  costPicoUsd: z.string().regex(/^-?\d+$/),
  unpricedCalls: count,
});

type GroupRow = z.infer<typeof groupRowSchema>;

/** Usage of `[from, to)` grouped as asked, with the totals, in one round trip ({@link usageReportQuery}). */
export async function usageReport(db: Queryable, value: unknown): Promise<UsageReportRows> {
  const query = resolveUsageQuery(value);
  const result = await db.query(usageReportQuery(query));
  const rows = result.rows.map((row: unknown) => parseRow(groupRowSchema, row, 'usage report row'));
  const [total, ...groups] = rows;
  if (total === undefined || !total.isTotal) throw new StateCorruptError('usage report has no totals row');
  return {
    rows: groups.slice(0, query.limit).map((row) => Object.assign({ key: row.key ?? '' }, sums(row))),
    totals: sums(total),
    truncated: groups.length > query.limit,
  };
}

function sums(row: GroupRow): UsageSums {
  return {
    llmCalls: row.llmCalls,
    inputs: row.inputs,
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    cachedTokens: row.cachedTokens,
    cacheWriteTokens: row.cacheWriteTokens,
    reasoningTokens: row.reasoningTokens,
    totalTokens: row.totalTokens,
    costPicoUsd: row.costPicoUsd,
    unpricedCalls: row.unpricedCalls,
  };
}
