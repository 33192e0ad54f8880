import type { UsageGroupBy, UsageReportRows, UsageSums } from '../../../src/core/ports/tenant-admin.js';
import type { UsageRoundRecord } from '../../../src/core/session-types.js';
import { resolveUsageQuery } from '../../../src/store/usage/usage-report-options.js';
import { compareText } from './in-memory-store-rows.js';

/** A usage row with what Postgres copies onto it from its session (and the cost, once rows carry it). */
export interface TaggedUsageRound {
  row: UsageRoundRecord & { costPicoUsd?: number | null };
  tenant: string;
  agent: string;
}

function keyOf(groupBy: UsageGroupBy, { row, agent }: TaggedUsageRound): string {
  if (groupBy === 'day') return row.createdAt.toISOString().slice(0, 10);
  if (groupBy === 'agent') return agent;
  if (groupBy === 'model') return `${row.provider}:${row.model}`;
  return row.sessionId;
}

/** `usageReport` over the fake's rows, as the Postgres store answers it. */
export function usageReportOf(rounds: Iterable<TaggedUsageRound>, value: unknown): UsageReportRows {
  const query = resolveUsageQuery(value);
  const matching = [...rounds].filter(
    (r) =>
      r.row.createdAt.getTime() >= query.from.getTime() &&
      r.row.createdAt.getTime() < query.to.getTime() &&
      (query.tenant === null || r.tenant === query.tenant) &&
      (query.agent === null || r.agent === query.agent),
  );
  const groups = new Map<string, TaggedUsageRound[]>();
  for (const r of matching) {
    const key = keyOf(query.groupBy, r);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const keys = [...groups.keys()].sort(compareText);
  return {
    rows: keys.slice(0, query.limit).map((key) => Object.assign({ key }, sums(groups.get(key)!))),
    totals: sums(matching),
    truncated: keys.length > query.limit,
  };
}

function sums(rounds: readonly TaggedUsageRound[]): UsageSums {
  const total = (pick: (row: UsageRoundRecord) => number): number => rounds.reduce((sum, r) => sum + pick(r.row), 0);
  const priced = rounds.filter((r) => r.row.costPicoUsd !== undefined && r.row.costPicoUsd !== null);
  return {
    llmCalls: total((row) => row.llmCalls),
    inputs: new Set(rounds.map((r) => `${r.row.sessionId}:${r.row.inputSeq}`)).size,
    promptTokens: total((row) => row.promptTokens),
    completionTokens: total((row) => row.completionTokens),
    cachedTokens: total((row) => row.cachedTokens),
    cacheWriteTokens: total((row) => row.cacheWriteTokens),
    reasoningTokens: total((row) => row.reasoningTokens),
    totalTokens: total((row) => row.totalTokens),
    costPicoUsd: priced.reduce((sum, r) => sum + BigInt(r.row.costPicoUsd!), 0n).toString(),
    unpricedCalls: rounds.filter((r) => r.row.costPicoUsd === undefined || r.row.costPicoUsd === null).reduce((sum, r) => sum + r.row.llmCalls, 0),
  };
}
