import { z } from 'zod';
import type { UsageRoundRecord } from '../../core/session-types.js';
import { parseRow } from './parse-row.js';

const count = z.number().int().nonnegative();

/** Rows as drizzle returns them from `usage_rounds` (the same names as {@link UsageRoundRecord}). */
const usageRoundRowSchema: z.ZodType<UsageRoundRecord> = z.object({
  sessionId: z.string().min(1),
  inputSeq: z.number().int().positive(),
  round: count,
  provider: z.string(),
  model: z.string(),
  llmCalls: count,
  promptTokens: count,
  completionTokens: count,
  cachedTokens: count,
  cacheWriteTokens: count,
  reasoningTokens: count,
  totalTokens: count,
  costPicoUsd: count.nullable(),
  createdAt: z.date(),
});

/** Validates a `usage_rounds` row; `state.corrupt` if it does not fit. */
export function decodeUsageRound(row: unknown): UsageRoundRecord {
  const key = row as { sessionId?: unknown; inputSeq?: unknown; round?: unknown } | null;
  return parseRow(usageRoundRowSchema, row, `usage round ${String(key?.sessionId)}#${String(key?.inputSeq)}/${String(key?.round)}`);
}
