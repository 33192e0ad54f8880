import { BudgetExceededError, CancelledError, LlmNonRetryableError, LlmRetryExhaustedError, LlmTimeoutError, toLoopfleetError } from '../errors/index.js';
import type { LlmRequest, LlmResponse } from '../ports/llm.js';
import { picoToUsd } from '../pricing/index.js';
import { runWithRetry } from '../retry/index.js';
import { reserveCall, settleCall, settleQuietly, type CallKind } from './budget-gate.js';
import { emit } from './emit.js';
import type { RunContext } from './run-context.js';
import { closeLlmSpan, openLlmSpan } from './trace-spans.js';
import { callCost } from './usage.js';

/** How one model call ended: a reply, given up on (`degraded`), or cancelled with what had streamed. */
export type ModelCallOutcome =
  | { kind: 'ok'; response: LlmResponse; attempts: number }
  | { kind: 'degraded'; reason: 'retry_exhausted' | 'timeout' | 'non_retryable'; error: Error; attempts: number }
  | { kind: 'cancelled'; error: CancelledError; partialText: string }
  /** A budget refused the call before it was made (docs/budgets.md). */
  | { kind: 'refused'; error: BudgetExceededError };

const STREAM_ID = 'main';

/**
 * One LLM call under the loop's retry policy, with the per-attempt events (`llm_call_started/
 * completed`, `stream_*`, `llm_retry_attempted`). Giving up is not an exception but `degraded`;
 * cancellation returns the text streamed so far so the run can keep it. The call reserves its worst
 * case on the session's budgets first (a refusal is `refused`, no call made) and settles after.
 */
export async function callModel(ctx: RunContext, request: LlmRequest, round: number, kind: CallKind = 'model'): Promise<ModelCallOutcome> {
  const hold = await reserveCall(ctx, request, kind);
  if (hold.kind === 'refused') return { kind: 'refused', error: hold.error };
  let outcome: ModelCallOutcome;
  try {
    outcome = await callUnbudgeted(ctx, request, round);
  } catch (error) {
    await settleQuietly(ctx, hold);
    throw error;
  }
  await settleCall(ctx, hold, outcome.kind === 'ok' ? outcome.response : null);
  return outcome;
}

async function callUnbudgeted(ctx: RunContext, request: LlmRequest, round: number): Promise<ModelCallOutcome> {
  const { deps } = ctx;
  const partial = { text: '' };
  let attempts = 0;
  try {
    const response = await runWithRetry(
      async (attempt, signal) => {
        attempts = attempt;
        partial.text = '';
        return attemptCall(ctx, request, round, attempt, signal, partial);
      },
      {
        policy: deps.retryPolicy,
        clock: deps.clock,
        signal: ctx.params.signal,
        ...(deps.random !== undefined ? { random: deps.random } : {}),
        onAttemptFailed: (info) => {
          if (!info.willRetry) return;
          const error = toLoopfleetError(info.error);
          emit(ctx, {
            type: 'llm_retry_attempted',
            attempt: info.attempt,
            maxAttempts: deps.retryPolicy.maxAttempts,
            errorType: errorType(info.error),
            errorMessage: error.message.slice(0, 500),
            nextDelayMs: info.delayMs ?? 0,
          });
        },
      },
    );
    return { kind: 'ok', response, attempts };
  } catch (error) {
    if (error instanceof CancelledError) return { kind: 'cancelled', error, partialText: partial.text };
    const reason =
      error instanceof LlmTimeoutError ? 'timeout' : error instanceof LlmNonRetryableError ? 'non_retryable' : error instanceof LlmRetryExhaustedError ? 'retry_exhausted' : null;
    if (reason === null) throw error;
    emit(ctx, { type: 'llm_degraded', reason, attempts, errorType: errorType(causeOf(error)), errorMessage: causeOf(error).message.slice(0, 500) });
    return { kind: 'degraded', reason, error: error as Error, attempts };
  }
}

async function attemptCall(
  ctx: RunContext,
  request: LlmRequest,
  round: number,
  attempt: number,
  signal: AbortSignal,
  partial: { text: string },
): Promise<LlmResponse> {
  const { deps } = ctx;
  const callId = `r${round}.a${attempt}`;
  const model = request.model ?? deps.llm.model;
  const started = deps.clock.now();
  let firstTokenAt: number | null = null;
  let streamed = false;
  emit(ctx, { type: 'llm_call_started', callId, roundIndex: round, attempt, model });
  emit(ctx, { type: 'stream_started', streamId: STREAM_ID, attempt });
  const span = openLlmSpan(ctx, request, model, attempt);
  const completed = (success: boolean, error: unknown, response: LlmResponse | null) => {
    closeLlmSpan(span, response, error);
    const costPicoUsd = response === null ? null : callCost(ctx, response, attempt);
    emit(ctx, {
      type: 'llm_call_completed',
      callId,
      roundIndex: round,
      attempt,
      model: response?.model ?? model,
      provider: response?.provider ?? deps.llm.provider,
      durationMs: deps.clock.now() - started,
      timeToFirstTokenMs: firstTokenAt === null ? null : firstTokenAt - started,
      success,
      errorType: success ? null : errorType(error),
      usage: response?.usage ?? null,
      ...(costPicoUsd !== null ? { costUsd: picoToUsd(costPicoUsd) } : {}),
    });
    emit(ctx, { type: 'stream_completed', streamId: STREAM_ID, attempt, success });
  };
  try {
    const response = await deps.llm.complete(request, {
      signal,
      handlers: {
        onTextDelta: (text) => {
          firstTokenAt ??= deps.clock.now();
          streamed = true;
          partial.text += text;
          emit(ctx, { type: 'stream_delta', streamId: STREAM_ID, text });
        },
        onFallback: (info) => {
          emit(ctx, { type: 'llm_fallback', ...info });
          // The failed provider's text is not part of the reply: the next provider starts over.
          if (streamed) emit(ctx, { type: 'stream_discarded', streamId: STREAM_ID, attempt, reason: `fallback ${info.from} -> ${info.to}` });
          streamed = false;
          partial.text = '';
        },
        onThinkingDelta: (text) => {
          firstTokenAt ??= deps.clock.now();
          emit(ctx, { type: 'stream_think_delta', streamId: STREAM_ID, text });
        },
      },
    });
    completed(true, null, response);
    return response;
  } catch (error) {
    completed(false, error, null);
    // A cancelled run keeps its partial text; any other failure is retried from the start.
    if (streamed && !ctx.params.signal.aborted) emit(ctx, { type: 'stream_discarded', streamId: STREAM_ID, attempt, reason: errorType(error) });
    throw error;
  }
}

function causeOf(error: unknown): Error {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause;
  return error instanceof Error ? error : new Error(String(error));
}

function errorType(error: unknown): string {
  if (error instanceof Error) return (error as { code?: unknown }).code === undefined ? error.name : `${error.name}(${String((error as { code?: unknown }).code)})`;
  return typeof error;
}
