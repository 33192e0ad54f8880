import type { LoopfleetError } from '../errors/index.js';
import type { ToolCallWrite, UsageRoundWrite } from '../ports/session-store.js';
import type { InputResult, RunOutcome, TerminalInputStatus } from '../session-types.js';
import { storable } from '../storable-text.js';
import { commitStep } from './commit-step.js';
import type { StepMessageInput } from './step-input.js';
import { emit } from './emit.js';
import type { RunContext } from './run-context.js';

export interface FinishOptions {
  /** Messages committed in the same step as the finish (the final assistant reply, a degraded note). */
  messages?: StepMessageInput[];
  usageRounds?: UsageRoundWrite[];
  /** Ledger rows written in the same step (calls closed by the finish). */
  toolCalls?: ToolCallWrite[];
  /** `null` clears the pending state in the same step. */
  pending?: null;
  output?: unknown;
  error?: LoopfleetError;
  /** Why the run ended, for `session_ended` (defaults to the status). */
  reason?: string;
  /** Rounds to report; defaults to the rounds run. */
  rounds?: number;
  /** False to commit `messages` without running `message.append` hooks (see `StepInput.appendHooks`). */
  appendHooks?: false;
}

/**
 * The one way a run ends (I6): the result, the input's terminal status, the session's stats and any
 * last messages are committed in ONE step — a crash before it leaves the input running (and the next
 * holder redoes the last round), a crash after it leaves nothing to redo.
 */
export async function finishRun(ctx: RunContext, status: RunOutcome, finalText: string, options: FinishOptions = {}): Promise<InputResult> {
  // What the model wrote, as the store keeps it: the caller gets what history() and result() read.
  const result: InputResult = storable({
    status,
    finalText,
    rounds: options.rounds ?? ctx.round,
    toolCalls: ctx.toolCalls,
    usage: { ...ctx.usage },
    ...(options.output !== undefined ? { output: options.output } : {}),
  });
  await commitStep(ctx, {
    ...(options.messages !== undefined ? { messages: options.messages } : {}),
    ...(options.usageRounds !== undefined ? { usageRounds: options.usageRounds } : {}),
    ...(options.pending !== undefined ? { pending: options.pending } : {}),
    ...(options.toolCalls !== undefined ? { toolCalls: options.toolCalls } : {}),
    ...(options.appendHooks === false ? { appendHooks: false } : {}),
    input: {
      seq: ctx.params.input.seq,
      status: rowStatus(status),
      result,
      ...(options.error !== undefined ? { errorCode: options.error.code, errorMessage: options.error.message } : {}),
    },
  });
  const reason = options.reason ?? status;
  emit(ctx, { type: 'session_ended', reason, status });
  await runSessionEndHook(ctx, status, reason, finalText);
  return result;
}

function rowStatus(status: RunOutcome): TerminalInputStatus {
  if (status === 'failed') return 'failed';
  if (status === 'cancelled') return 'cancelled';
  return 'done';
}

/** The run is already committed: a failing `session.end` hook is reported, never fatal. */
async function runSessionEndHook(ctx: RunContext, status: RunOutcome, reason: string, finalText: string): Promise<void> {
  if (!ctx.deps.hooks.handles('session.end')) return;
  try {
    await ctx.deps.hooks.run('session.end', { sessionId: ctx.params.sessionId, inputSeq: ctx.params.input.seq, status, reason, finalText });
  } catch (error) {
    ctx.deps.onObserverError?.(error);
  }
}
