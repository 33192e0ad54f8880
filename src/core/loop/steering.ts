import { InternalError } from '../errors/index.js';
import { contentText, type ImagePart, type Message } from '../messages.js';
import { notificationText, parseInputPayload, sendContent } from '../input-payload.js';
import type { InputRecord } from '../session-types.js';
import { commitStep } from './commit-step.js';
import type { StepMessageInput } from './step-input.js';
import { emit } from './emit.js';
import { announceChildResult } from './spawn-children.js';
import type { RunContext } from './run-context.js';

/** What waits to change the running input. */
export interface SteeringCheck {
  /** Inputs that arrived in `steer` mode (or timer firings, or a `wait: false` child's result) and wait to join this run. */
  steerable: InputRecord[];
  /** An `interrupt` input is waiting: the run stops at this safe point. */
  interrupt: boolean;
}

/**
 * Inputs accepted after the running one that affect it now: `steer` inputs and timer firings join it, an `interrupt` stops it. At a round start
 * the last commit (or the claim) just told whether any pending input would change the run — it came
 * after the model call and the tools — so when none would (none pending, or only queued ones),
 * nothing is read. After a model reply, before anything is
 * committed (`fresh`), the store is always asked: inputs arrive while the model answers.
 */
export async function checkSteering(ctx: RunContext, options: { fresh?: boolean } = {}): Promise<SteeringCheck> {
  if (options.fresh !== true && !ctx.stored.pendingSteers) return { steerable: [], interrupt: false };
  // Only those that change the run, however many queued inputs wait before them.
  const later = await ctx.deps.store.listInputs(ctx.params.sessionId, { status: 'pending', afterSeq: ctx.params.input.seq, limit: 100, affectsRun: true });
  return {
    // A `resume` (an answer, abortPending) is never folded into a run as text: in `steer` mode it
    // runs as its own input after this one, as a queued one would.
    steerable: later.filter((input) => (input.mode === 'steer' && input.kind === 'send') || input.kind === 'timer' || input.kind === 'child'),
    interrupt: later.some((input) => input.mode === 'interrupt'),
  };
}

/**
 * Appends the steerable inputs to this run's conversation (as follow-ups) and hands
 * them to this run in the same step, so they are delivered exactly once. Returns how many joined.
 */
export async function applySteering(ctx: RunContext, steerable: InputRecord[], round: number): Promise<number> {
  if (steerable.length === 0) return 0;
  const messages: StepMessageInput[] = steerable.map((input) => ({ round, message: steerMessage(input) }));
  await commitStep(ctx, { messages, steer: { seqs: steerable.map((input) => input.seq) } });
  emit(ctx, { type: 'steer_applied', inputSeqs: steerable.map((input) => input.seq), roundIndex: round });
  for (const input of steerable) if (input.kind === 'child') announceChildResult(ctx, parseInputPayload(input.kind, input.payload));
  return steerable.length;
}

/**
 * Steering text is wrapped so the model can tell it arrived mid-task; a timer says it is one. A
 * follow-up keeps its images (as parts after the text) and its author's `name`.
 */
function steerMessage(input: InputRecord): Message {
  const parsed = parseInputPayload(input.kind, input.payload);
  if (parsed.kind === 'timer' || parsed.kind === 'child') return { role: 'user', content: notificationText(parsed) };
  if (parsed.kind !== 'send') throw new InternalError(`input ${input.seq} (${input.kind}) cannot steer a run`);
  const { content, name } = sendContent(parsed.payload);
  const text = `<follow_up>\n${contentText(content)}\n</follow_up>`;
  const images = typeof content === 'string' ? [] : content.filter((part): part is ImagePart => part.type === 'image');
  const message: Message = { role: 'user', content: images.length === 0 ? text : [{ type: 'text', text }, ...images] };
  return name === undefined ? message : Object.assign(message, { name });
}
