import type { InputResult, RunOutcome, TerminalInputStatus } from '../session-types.js';
import { storable } from '../storable-text.js';
import { commitStep } from './commit-step.js';
import type { ChildrenWait, EndStep, FinishOptions } from './next-step.js';
import { childrenUsage } from './spawn-children.js';
import { emit } from './emit.js';
import type { RunContext } from './run-context.js';

/**
 * The one way a run ends (I6), called by the round loop alone with the {@link EndStep} a phase
 * returned: the result, the input's terminal status, the session's stats and any last messages are
 * committed in ONE step — a crash before it leaves the input running (and the next holder redoes the
 * last round), a crash after it leaves nothing to redo.
 */
export async function finishRun(ctx: RunContext, end: EndStep): Promise<InputResult> {
  if (end.kind === 'wait' && end.reason === 'waiting_for_children') return parkRun(ctx, end);
  const status: RunOutcome = end.kind === 'wait' ? end.reason : end.status;
  const finalText = end.text;
  const options: FinishOptions = end.kind === 'wait' ? { reason: end.reason, rounds: end.rounds } : end;
  const children = await childrenUsage(ctx);
  // What the model wrote, as the store keeps it: the caller gets what history() and result() read.
  const result: InputResult = storable({
    status,
    finalText,
    rounds: options.rounds ?? ctx.state.round,
    toolCalls: ctx.state.toolCalls,
    usage: children === null ? { ...ctx.state.usage } : Object.assign({}, ctx.state.usage, { children }),
    ...(options.output !== undefined ? { output: options.output } : {}),
    ...(ctx.deps.agent !== undefined ? { agent: ctx.deps.agent } : {}),
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
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

/**
 * The run parks: the input waits for its children, `waiting` and not finished (no result is stored,
 * no `input_finished` is published, I6 still owes it one). The result returned only tells the caller.
 */
async function parkRun(ctx: RunContext, end: ChildrenWait): Promise<InputResult> {
  await ctx.deps.store.parkInput({ sessionId: ctx.params.sessionId, leaseToken: ctx.params.leaseToken, inputSeq: ctx.params.input.seq, awaiting: end.awaiting });
  emit(ctx, { type: 'session_ended', reason: end.reason, status: end.reason });
  return { status: end.reason, finalText: end.text, rounds: ctx.state.round, toolCalls: ctx.state.toolCalls, usage: { ...ctx.state.usage } };
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
