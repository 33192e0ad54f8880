import { InputInvalidError, SessionPendingError } from '../errors/index.js';
import { notificationText, sendContent } from '../input-payload.js';
import type { UserMessage } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import { closeOpenCalls } from './close-open-calls.js';
import { commitStep, deferMessages } from './commit-step.js';
import { CONTINUE, waitForInput, type NextStep } from './next-step.js';
import { narrowPending, toolResultMessage, unresolvedCalls } from './pending-results.js';
import { rejectedEnd } from './run-outcomes.js';
import type { RunContext } from './run-context.js';
import { announceChildResult } from './spawn-children.js';

/**
 * Checks the input and, for a `resume`, applies it: it answers a question (`submit`) or closes every
 * open call (`abortPending`). Idempotent across a takeover: a step this input already committed is
 * found in the window and not repeated. Returns how the run ends when the input ends here.
 */
export async function startInput(ctx: RunContext): Promise<NextStep> {
  if (ctx.payloadError !== undefined) return rejectedEnd(ctx.payloadError);
  const seq = ctx.params.input.seq;
  if (ctx.parsed.kind === 'resume') return startResume(ctx, ctx.stored.window.some((row) => row.inputSeq === seq));
  // Open calls of an earlier input (ended, since inputs run in seq order) are left to a `resume`: a
  // question waiting for its answer, or the calls of an input given up on (`give-up-input.ts`) that
  // a send must not run again — one of them may be what kept crashing its workers.
  if (ctx.stored.pending !== null && ctx.stored.pending.inputSeq !== seq) return rejectedEnd(pendingRefusal(ctx.stored.pending));
  return CONTINUE;
}

/** Why a `send` or `timer` is refused while an earlier input's calls are open (`session.pending`). */
function pendingRefusal(pending: PendingState): SessionPendingError {
  if (pending.interactions.length > 0) {
    const waiting = pending.interactions.map((entry) => entry.interactionId).join(', ');
    return new SessionPendingError(`the session is waiting for an answer to ${waiting}; answer it with submitInput, or close it with abortPending, before sending`);
  }
  const open = unresolvedCalls(pending);
  return new SessionPendingError(
    `input ${pending.inputSeq} ended with tool call(s) ${open.map((call) => `${call.name} (${call.id})`).join(', ')} still open; run them again with a resume input, or close them with abortPending, before sending`,
    { details: { inputSeq: pending.inputSeq, toolCallIds: open.map((call) => call.id) } },
  );
}

/**
 * Makes a `send` or `timer` part of the conversation, once. Called after open calls were answered:
 * a user message between an assistant's tool calls and their results is refused by both providers.
 * Its own message is the one row of the input written outside a round.
 * It joins the window and is announced now, and is written with the run's next step (the one after
 * the model's first reply, or the finish): a commit of its own would only make it durable a model
 * call earlier, and a run that stops before that step appends it again when the input resumes.
 */
export async function appendInputMessage(ctx: RunContext): Promise<void> {
  const parsed = ctx.parsed;
  if (parsed.kind === 'resume') return;
  const seq = ctx.params.input.seq;
  if (ctx.stored.window.some((row) => row.inputSeq === seq && row.round === null)) return;
  const message: UserMessage = parsed.kind === 'send' ? { role: 'user', ...sendContent(parsed.payload) } : { role: 'user', content: notificationText(parsed) };
  await deferMessages(ctx, [{ round: null, message }]);
  announceChildResult(ctx, parsed);
}

async function startResume(ctx: RunContext, started: boolean): Promise<NextStep> {
  if (ctx.parsed.kind !== 'resume') return CONTINUE;
  const { submit, abortPending } = ctx.parsed.payload;
  if (abortPending !== undefined) {
    const pending = ctx.stored.pending;
    if (pending !== null) await closeOpenCalls(ctx, unresolvedCalls(pending), `<aborted: ${abortPending.reason}>`, pending.round);
    return { kind: 'finish', status: 'completed', text: '', reason: 'aborted_pending', rounds: 0 };
  }
  if (submit === undefined || started) return CONTINUE;
  const interaction = ctx.stored.pending?.interactions.find((entry) => entry.interactionId === submit.interactionId);
  if (interaction === undefined || ctx.stored.pending === null) {
    return rejectedEnd(new InputInvalidError(`no question with interaction id ${submit.interactionId} is waiting for an answer`));
  }
  const call = ctx.stored.pending.toolCalls.find((entry) => entry.id === interaction.toolCallId)!;
  const content = typeof submit.value === 'string' ? submit.value : JSON.stringify(submit.value ?? null);
  await commitStep(ctx, {
    messages: [{ round: ctx.stored.pending.round, message: toolResultMessage(call, content, false) }],
    pending: narrowPending(ctx.stored.pending, [call.id]),
  });
  if (ctx.stored.pending !== null && ctx.stored.pending.interactions.length > 0) return waitForInput('', 0);
  return CONTINUE;
}
