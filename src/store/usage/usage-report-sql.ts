import type { UsageGroupBy } from '../../core/ports/tenant-admin.js';
import type { ResolvedUsageQuery } from './usage-report-options.js';

/** What each grouping keys a `usage_rounds` row by. */
const GROUP_KEY: Record<UsageGroupBy, string> = {
  day: `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  agent: 'agent',
  model: `provider || ':' || model`,
  session: 'session_id',
};

/**
 * A usage report in one statement over `usage_rounds` alone: the rows of `[from, to)` — of one tenant
 * by `usage_rounds_tenant_time_idx`, of every tenant by `usage_rounds_time_idx` — summed per group and,
 * through the empty grouping set, over all of them (the totals row comes first). Costs sum as
 * `numeric` and come back as text, exact past 2^53. It asks for two rows more than the limit: the
 * totals, and one that says groups were cut.
 */
export function usageReportQuery(query: ResolvedUsageQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [query.from, query.to];
  const where = ['created_at >= $1', 'created_at < $2'];
  if (query.tenant !== null) {
    values.push(query.tenant);
    where.push(`tenant = $${values.length}`);
  }
  if (query.agent !== null) {
    values.push(query.agent);
    where.push(`agent = $${values.length}`);
  }
  values.push(query.limit + 2);
  const text = `SELECT r.k AS key, grouping(r.k) = 1 AS "isTotal",
       COALESCE(sum(r.llm_calls), 0)::bigint AS "llmCalls",
       count(DISTINCT r.session_id || ':' || r.input_seq)::bigint AS inputs,
       COALESCE(sum(r.prompt_tokens), 0)::bigint AS "promptTokens",
       COALESCE(sum(r.completion_tokens), 0)::bigint AS "completionTokens",
       COALESCE(sum(r.cached_tokens), 0)::bigint AS "cachedTokens",
       COALESCE(sum(r.cache_write_tokens), 0)::bigint AS "cacheWriteTokens",
       COALESCE(sum(r.reasoning_tokens), 0)::bigint AS "reasoningTokens",
       COALESCE(sum(r.total_tokens), 0)::bigint AS "totalTokens",
       COALESCE(sum(r.cost_picousd), 0)::text AS "costPicoUsd",
       COALESCE(sum(r.llm_calls) FILTER (WHERE r.cost_picousd IS NULL), 0)::bigint AS "unpricedCalls"
  FROM (SELECT ${GROUP_KEY[query.groupBy]} AS k, session_id, input_seq, llm_calls, prompt_tokens, completion_tokens, cached_tokens,
               cache_write_tokens, reasoning_tokens, total_tokens, cost_picousd
          FROM usage_rounds WHERE ${where.join(' AND ')}) AS r
 GROUP BY GROUPING SETS ((r.k), ())
 ORDER BY grouping(r.k) DESC, r.k COLLATE "C"
 LIMIT $${values.length}`;
  return { text, values };
}
