import { z } from 'zod';
import { TOOL_CALL_STATUSES, type ToolCallRecord } from '../../core/session-types.js';
import { parseRow } from './parse-row.js';

/** The `tool_calls` columns, named as {@link ToolCallRecord} fields. */
export const TOOL_CALL_COLUMNS = `session_id AS "sessionId", tool_call_id AS "toolCallId", input_seq AS "inputSeq",
  round, name, args, status, attempts, idempotency_key AS "idempotencyKey", error_code AS "errorCode",
  started_at AS "startedAt", finished_at AS "finishedAt", duration_ms AS "durationMs"`;

const toolCallRowSchema: z.ZodType<ToolCallRecord> = z.object({
  sessionId: z.string().min(1),
  toolCallId: z.string().min(1),
  inputSeq: z.number().int().positive(),
  round: z.number().int().nonnegative(),
  name: z.string(),
  args: z.unknown(),
  status: z.enum(TOOL_CALL_STATUSES),
  attempts: z.number().int().nonnegative(),
  idempotencyKey: z.string().min(1),
  errorCode: z.string().nullable(),
  startedAt: z.date(),
  finishedAt: z.date().nullable(),
  durationMs: z.number().int().nonnegative().nullable(),
});

/** Validates a `tool_calls` row; `state.corrupt` if it does not fit. */
export function decodeToolCall(row: unknown): ToolCallRecord {
  const key = row as { sessionId?: unknown; toolCallId?: unknown } | null;
  return parseRow(toolCallRowSchema, row, `tool call ${String(key?.sessionId)}:${String(key?.toolCallId)}`);
}
