import { z } from 'zod';
import { pendingStateSchema } from '../../core/pending-state.js';
import { picoToUsd } from '../../core/pricing/index.js';
import { SESSION_STATUSES, type SessionRecord, type SessionStats } from '../../core/session-types.js';
import { parseRow } from './parse-row.js';

/** The cumulative stats columns of `sessions`, decoded by {@link statsOf}. */
export const SESSION_STATS_COLUMNS = `stat_inputs AS "statInputs", stat_rounds AS "statRounds", stat_llm_calls AS "statLlmCalls",
  stat_tool_calls AS "statToolCalls", stat_prompt_tokens AS "statPromptTokens",
  stat_completion_tokens AS "statCompletionTokens", stat_cached_tokens AS "statCachedTokens",
  stat_cache_write_tokens AS "statCacheWriteTokens",
  stat_reasoning_tokens AS "statReasoningTokens", stat_total_tokens AS "statTotalTokens",
  stat_cost_picousd AS "statCostPicoUsd",
  first_input_at AS "firstInputAt", last_input_at AS "lastInputAt"`;

/**
 * The `sessions` columns under the property names drizzle uses for the same table, so a row read by
 * raw SQL and one returned by drizzle decode alike.
 */
export const SESSION_COLUMNS = `id, agent, tenant, system_prompt AS "systemPrompt", metadata, config, status,
  next_seq AS "nextSeq", next_message_seq AS "nextMessageSeq",
  lease_owner AS "leaseOwner", lease_token AS "leaseToken", lease_expires_at AS "leaseExpiresAt",
  pending, cancel_requested_at AS "cancelRequestedAt", cascade_cancelled_at AS "cascadeCancelledAt",
  parent_session_id AS "parentSessionId", root_session_id AS "rootSessionId", depth,
  spawn_input_seq AS "spawnInputSeq", spawn_tool_call_id AS "spawnToolCallId", spawn_wait AS "spawnWait",
  ${SESSION_STATS_COLUMNS},
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const count = z.number().int().nonnegative();

/** The zod fields of {@link SESSION_STATS_COLUMNS}. */
export const sessionStatsShape = {
  statInputs: count,
  statRounds: count,
  statLlmCalls: count,
  statToolCalls: count,
  statPromptTokens: count,
  statCompletionTokens: count,
  statCachedTokens: count,
  statCacheWriteTokens: count,
  statReasoningTokens: count,
  statTotalTokens: count,
  statCostPicoUsd: count,
  firstInputAt: z.date().nullable(),
  lastInputAt: z.date().nullable(),
};

const sessionRowSchema = z.object({
  id: z.string().min(1),
  agent: z.string(),
  tenant: z.string().min(1),
  systemPrompt: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  config: z.record(z.string(), z.unknown()),
  status: z.enum(SESSION_STATUSES),
  nextSeq: count,
  nextMessageSeq: count,
  leaseOwner: z.string().nullable(),
  leaseToken: count,
  leaseExpiresAt: z.date().nullable(),
  pending: pendingStateSchema.nullable(),
  cancelRequestedAt: z.date().nullable(),
  cascadeCancelledAt: z.date().nullable(),
  parentSessionId: z.string().min(1).nullable(),
  rootSessionId: z.string().min(1).nullable(),
  depth: count,
  spawnInputSeq: z.number().int().positive().nullable(),
  spawnToolCallId: z.string().min(1).nullable(),
  spawnWait: z.boolean().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
  ...sessionStatsShape,
});

/** Validates a `sessions` row and shapes it as a {@link SessionRecord}; `state.corrupt` if it does not fit. */
export function decodeSession(row: unknown): SessionRecord {
  const id = (row as { id?: unknown } | null)?.id;
  const r = parseRow(sessionRowSchema, row, `session ${String(id)}`);
  return {
    id: r.id,
    agent: r.agent,
    tenant: r.tenant,
    systemPrompt: r.systemPrompt,
    metadata: r.metadata,
    config: r.config,
    status: r.status,
    nextSeq: r.nextSeq,
    nextMessageSeq: r.nextMessageSeq,
    lease: { owner: r.leaseOwner, token: r.leaseToken, expiresAt: r.leaseExpiresAt },
    pending: r.pending,
    cancelRequestedAt: r.cancelRequestedAt,
    cascadeCancelledAt: r.cascadeCancelledAt,
    parentSessionId: r.parentSessionId,
    // A root stores no root: it is its own.
    rootSessionId: r.rootSessionId ?? r.id,
    depth: r.depth,
    spawn: spawnOf(r),
    stats: statsOf(r),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** The stats of a row read with {@link SESSION_STATS_COLUMNS}. */
export function statsOf(r: z.infer<z.ZodObject<typeof sessionStatsShape>>): SessionStats {
  return {
    inputs: r.statInputs,
    rounds: r.statRounds,
    llmCalls: r.statLlmCalls,
    toolCalls: r.statToolCalls,
    promptTokens: r.statPromptTokens,
    completionTokens: r.statCompletionTokens,
    cachedTokens: r.statCachedTokens,
    cacheWriteTokens: r.statCacheWriteTokens,
    reasoningTokens: r.statReasoningTokens,
    totalTokens: r.statTotalTokens,
    costUsd: picoToUsd(r.statCostPicoUsd),
    costPicoUsd: r.statCostPicoUsd,
    firstInputAt: r.firstInputAt,
    lastInputAt: r.lastInputAt,
  };
}

/** A child's spawning call from its three columns; null for a root (or a row missing any of them). */
function spawnOf(r: { spawnInputSeq: number | null; spawnToolCallId: string | null; spawnWait: boolean | null }): SessionRecord['spawn'] {
  if (r.spawnInputSeq === null || r.spawnToolCallId === null || r.spawnWait === null) return null;
  return { inputSeq: r.spawnInputSeq, toolCallId: r.spawnToolCallId, wait: r.spawnWait };
}
