import { picoTextToUsd } from '../core/pricing/usd-amount.js';
import type { ClientStore } from '../core/ports/client-store.js';
import type { UsageGroupBy, UsageQuery, UsageSums } from '../core/ports/tenant-admin.js';
import { resolveUsageQuery } from '../store/usage/usage-report-options.js';

/** One group's sums, with the cost in USD (a number, for display) besides the exact picodollars. */
export type UsageTotals = UsageSums & { costUsd: number };

/** One row of a usage report: its key (a UTC day `YYYY-MM-DD`, an agent, `provider:model`, or a session id) and sums. */
export type UsageRow = UsageTotals & { key: string };

/** What `queue.usage` answers. */
export interface UsageReport {
  groupBy: UsageGroupBy;
  tenant: string | null;
  agent: string | null;
  from: Date;
  to: Date;
  /** The groups in key order (byte order), at most `limit`. */
  rows: UsageRow[];
  /** Over every group, those past the limit included. */
  totals: UsageTotals;
  /** True when groups past the limit were left out of `rows`. */
  truncated: boolean;
}

/**
 * A usage report (docs/usage.md) from the store: the query checked once, every cost given both as
 * exact picodollar text and as a USD number.
 */
export async function readUsageReport(store: ClientStore, query: UsageQuery): Promise<UsageReport> {
  const resolved = resolveUsageQuery(query);
  const answer = await store.usageReport(query);
  return {
    groupBy: resolved.groupBy,
    tenant: resolved.tenant,
    agent: resolved.agent,
    from: resolved.from,
    to: resolved.to,
    rows: answer.rows.map((row) => Object.assign({}, row, { costUsd: picoTextToUsd(row.costPicoUsd) })),
    totals: Object.assign({}, answer.totals, { costUsd: picoTextToUsd(answer.totals.costPicoUsd) }),
    truncated: answer.truncated,
  };
}
