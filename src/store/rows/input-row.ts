import { z } from 'zod';
import {
  INPUT_KINDS,
  INPUT_MODES,
  INPUT_STATUSES,
  RUN_OUTCOMES,
  type InputRecord,
  type InputResult,
} from '../../core/session-types.js';
import { parseTraceContext, type TraceContext } from '../../core/ports/tracing.js';
import { parseRow } from './parse-row.js';

/** The `session_inputs` columns, named as {@link InputRecord} fields. */
export const INPUT_COLUMNS = `session_id AS "sessionId", seq, input_id AS "inputId", kind, mode, payload,
  status, attempts, steered_into AS "steeredInto", result, awaiting, error_code AS "errorCode", error_message AS "errorMessage",
  origin_job_id AS "originJobId", trace_context AS "traceContext", accepted_at AS "acceptedAt", started_at AS "startedAt",
  finished_at AS "finishedAt"`;

const count = z.number().int().nonnegative();

const ownUsageSchema = z.object({
  promptTokens: count,
  completionTokens: count,
  cachedTokens: count,
  // Results stored before the cache write was counted have none: 0.
  cacheWriteTokens: count.default(0),
  reasoningTokens: count,
  totalTokens: count,
  llmCalls: count,
  // Results stored before costs were recorded have none: 0 (docs/prices.md).
  costUsd: z.number().nonnegative().default(0),
  costPicoUsd: count.default(0),
  unpricedCalls: count.optional(),
});

/** An input's usage, with what its child sessions spent under `children` (docs/child-sessions.md). */
const usageSchema = ownUsageSchema.extend({ children: ownUsageSchema.optional() });

/** The shape of a run result; the producer extends it to check `input_finished` events. */
export const inputResultObjectSchema = z.object({
  status: z.enum(RUN_OUTCOMES),
  finalText: z.string(),
  rounds: count,
  toolCalls: count,
  usage: usageSchema,
  output: z.unknown().optional(),
  steeredInto: z.number().int().positive().optional(),
  agent: z.object({ name: z.string().min(1), version: z.string().min(1) }).strict().optional(),
  budget: z
    .object({
      budgetId: z.number().int(),
      scope: z.enum(['session', 'tenant', 'agent']),
      tenant: z.string(),
      agent: z.string(),
      sessionId: z.string(),
      unit: z.enum(['tokens', 'usd']),
      period: z.enum(['total', 'day', 'month']),
      windowStart: z.string(),
      limit: z.number(),
      used: z.number(),
      reserved: z.number(),
      reason: z.enum(['limit', 'unpriced_model']),
    })
    .optional(),
});

/** A stored run result. Also used to check a result before it is written. */
export const inputResultSchema: z.ZodType<InputResult> = inputResultObjectSchema;

const inputRowSchema: z.ZodType<InputRecord> = z.object({
  sessionId: z.string().min(1),
  seq: z.number().int().positive(),
  inputId: z.string().min(1),
  kind: z.enum(INPUT_KINDS),
  mode: z.enum(INPUT_MODES),
  payload: z.record(z.string(), z.unknown()),
  status: z.enum(INPUT_STATUSES),
  attempts: count,
  steeredInto: z.number().int().positive().nullable(),
  result: inputResultSchema.nullable(),
  awaiting: z.array(z.string().min(1)).nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  originJobId: z.string().nullable(),
  // Best effort, as every trace context read from outside: one that does not parse is dropped, not refused.
  traceContext: z.unknown().transform((value) => traceContextOf(value)),
  acceptedAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
});

/** Validates a `session_inputs` row; `state.corrupt` if it does not fit. */
export function decodeInput(row: unknown): InputRecord {
  const key = row as { sessionId?: unknown; seq?: unknown } | null;
  return parseRow(inputRowSchema, row, `input ${String(key?.sessionId)}#${String(key?.seq)}`);
}

/** A stored `trace_context` (`{ traceparent, tracestate? }`), or null when absent or malformed. */
function traceContextOf(value: unknown): TraceContext | null {
  if (typeof value !== 'object' || value === null) return null;
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  return parseTraceContext(traceparent, tracestate);
}
