import { z } from 'zod';
import type { InputRecord, InputResult, InputStatus, RunOutcome, Usage } from '../core/session-types.js';
import { inputResultObjectSchema } from '../store/rows/input-row.js';
import type { StreamEvent } from '../fleet/fleet-events.js';

/**
 * The terminal outcome of one input (I6), whether read from its `input_finished` event or
 * from its inbox row in Postgres: both carry the same fields.
 */
export interface InputOutcome extends InputResult {
  /** Why the input failed or was cut short, with a stable code; null when it was not. */
  error: { code: string; message: string } | null;
}

const TERMINAL: readonly InputStatus[] = ['done', 'failed', 'cancelled'];

const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0, costUsd: 0, costPicoUsd: 0 };

/**
 * The outcome stored on an inbox row, or null while the input has not settled. A steered input is
 * `done` from the moment it is delivered, but its outcome is its host's, written when the host
 * finishes: until then it is not settled either.
 */
export function outcomeFromRecord(record: InputRecord): InputOutcome | null {
  if (!TERMINAL.includes(record.status)) return null;
  if (record.steeredInto !== null && record.result === null && record.errorCode === null) return null;
  const result = record.result;
  const error = record.errorCode === null ? null : { code: record.errorCode, message: record.errorMessage ?? '' };
  const steeredInto = record.steeredInto ?? result?.steeredInto;
  return {
    status: result?.status ?? statusWithoutResult(record.status),
    finalText: result?.finalText ?? '',
    rounds: result?.rounds ?? 0,
    toolCalls: result?.toolCalls ?? 0,
    usage: result === null ? { ...ZERO_USAGE } : { ...result.usage },
    ...(result?.output !== undefined ? { output: result.output } : {}),
    error,
    ...(steeredInto !== undefined ? { steeredInto } : {}),
  };
}

/** A row that ended without a run result (refused before running) still has a terminal status. */
function statusWithoutResult(status: InputStatus): RunOutcome {
  if (status === 'cancelled') return 'cancelled';
  if (status === 'failed') return 'failed';
  return 'completed';
}

/** `input_finished` as the worker writes it; events are untrusted input, so they are checked. */
const finishedSchema = inputResultObjectSchema.extend({
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

/** The outcome an `input_finished` event carries, or null when the entry does not have that shape. */
export function outcomeFromEvent(event: StreamEvent): InputOutcome | null {
  if (event.type !== 'input_finished') return null;
  const parsed = finishedSchema.safeParse(event.data);
  if (!parsed.success) return null;
  const { output, steeredInto, ...rest } = parsed.data;
  return {
    ...rest,
    ...(output !== undefined ? { output } : {}),
    ...(steeredInto !== undefined ? { steeredInto } : {}),
  };
}
