import { CancelledError, InfrastructureError, LeaseLostError, toLoopfleetError, type LoopfleetError } from '../errors/index.js';
import type { StepMessageInput } from './step-input.js';
import { emit } from './emit.js';
import type { FinishOptions, FinishStep } from './next-step.js';
import { closingResultContent, ledgerWrite, toolResultMessage, unresolvedCalls } from './pending-results.js';
import type { ModelCallOutcome } from './call-model.js';
import type { RunContext } from './run-context.js';
import { addFailedAttempts } from './usage.js';

/**
 * A cancellation the run should end as `cancelled` (user cancel, interrupt) — as opposed to one that
 * only stops this worker (shutdown, lease loss), after which the next holder continues the input.
 */
export function finishingCancel(reason: string): CancelledError {
  return new CancelledError(reason, { details: { finish: true } });
}

/** Whether the cancel ends the input (see {@link finishingCancel}) or only stops this worker. */
export function isFinishingCancel(error: CancelledError): boolean {
  return error.details.finish === true;
}

/** The synthetic result of a tool call a finishing cancel closed before it finished. */
export function cancelledSkipContent(reason: string): string {
  return `[skipped: cancelled — ${reason}]`;
}

/** Synthetic results (and ledger rows) closing every open call, for a terminal step. */
function closingStep(ctx: RunContext, content: string): Pick<FinishOptions, 'messages' | 'toolCalls' | 'pending'> {
  const pending = ctx.stored.pending;
  if (pending === null) return { messages: [] };
  const calls = unresolvedCalls(pending);
  return {
    messages: calls.map((call) => ({ round: pending.round, kind: 'synthetic_tool_result' as const, message: toolResultMessage(call, closingResultContent(ctx, call, content), false) })),
    toolCalls: calls.map((call) => ledgerWrite(ctx, call, pending.round, 'aborted')),
    pending: null,
  };
}

/**
 * How a finishing cancel ends the run: `cancelled`, open calls closed, and what the model had
 * streamed kept. Any other cancel (shutdown, lease loss) is thrown on: this worker only stops.
 */
export function cancelledEnd(ctx: RunContext, error: CancelledError, partialText = ''): FinishStep {
  if (!isFinishingCancel(error)) throw error;
  emit(ctx, { type: 'loop_cancelled', reason: error.message, roundIndex: ctx.state.round });
  const closing = closingStep(ctx, cancelledSkipContent(error.message));
  const messages: StepMessageInput[] = [...(closing.messages ?? [])];
  // What the model had streamed before the cancel is kept: produced work is never thrown away.
  if (partialText.trim() !== '') messages.push({ round: ctx.state.round, message: { role: 'assistant', content: partialText } });
  return Object.assign({ kind: 'finish' as const, status: 'cancelled' as const, text: `[cancelled: ${error.message}]` }, closing, { messages, reason: 'cancelled' as const });
}

/** The model could not be reached (retries exhausted, a timeout, a non-retryable error): `degraded`, with a note saying why. */
export function degradedEnd(ctx: RunContext, outcome: Extract<ModelCallOutcome, { kind: 'degraded' }>): FinishStep {
  const cause = outcome.error.cause instanceof Error ? outcome.error.cause : outcome.error;
  const text = `[degraded: LLM ${outcome.reason} — ${cause.name}: ${cause.message.slice(0, 200)}]`;
  addFailedAttempts(ctx, outcome.attempts);
  return {
    kind: 'finish',
    status: 'degraded',
    text,
    messages: [{ round: ctx.state.round, kind: 'degraded', message: { role: 'assistant', content: text } }],
    error: toLoopfleetError(outcome.error),
    reason: 'degraded',
  };
}

/**
 * Any other failure (a hook threw, persisted state was corrupt …): `agent_error`, open calls closed so
 * the history stays valid (I4), input `failed` with the error's code. Lease loss is not a failure of
 * the input: it propagates so the worker stops touching the session.
 */
export function failedEnd(ctx: RunContext, thrown: unknown): FinishStep {
  if (thrown instanceof LeaseLostError) throw thrown;
  if (thrown instanceof CancelledError) return cancelledEnd(ctx, thrown);
  // A store outage is not the input's fault: stop without finishing, the next attempt continues it.
  if (thrown instanceof InfrastructureError) throw thrown;
  const error: LoopfleetError = toLoopfleetError(thrown);
  emit(ctx, { type: 'agent_error', errorCode: error.code, errorType: thrown instanceof Error ? thrown.name : typeof thrown, message: error.message });
  // The failure may come from a `message.append` hook: the closing results bypass it, or the failure
  // could never be recorded and the input would stay running forever.
  return Object.assign({ kind: 'finish' as const, status: 'failed' as const, text: '' }, closingStep(ctx, '[skipped: the run failed]'), { error, reason: 'error' as const, appendHooks: false as const });
}

/**
 * The input is refused before it joins the conversation (invalid payload or overrides, a send while a
 * question waits, an answer to no waiting question): `failed` with the error's code and nothing else
 * written. Open calls and waiting questions belong to the session, not to this input (I8).
 */
export function rejectedEnd(error: Error): FinishStep {
  return { kind: 'finish', status: 'failed', text: '', error: toLoopfleetError(error), reason: 'error', rounds: 0 };
}
