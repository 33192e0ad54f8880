import { StateCorruptError } from '../errors/index.js';
import type { StoredMessage } from '../messages.js';
import { storable } from '../storable-text.js';
import { emit } from './emit.js';
import { hookScope, type RunContext } from './run-context.js';
import type { StepInput, StepMessageInput } from './step-input.js';

/**
 * Commits one step in one fenced transaction, then brings the in-memory run state in line with what
 * was written (window, pending) and publishes `message_appended`. `message.append` hooks run first
 * and may change what is persisted. Messages deferred with {@link deferMessages} are written first,
 * in the same transaction.
 */
export async function commitStep(ctx: RunContext, step: StepInput): Promise<number[]> {
  const { deps, params } = ctx;
  // What models and tools wrote, made storable (src/core/storable-text.ts); the window gets the same.
  const messages = storable(step.appendHooks === false ? (step.messages ?? []) : await runAppendHooks(ctx, step.messages ?? []));
  const parts = storable({ pending: step.pending, toolCalls: step.toolCalls, usageRounds: step.usageRounds, compaction: step.compaction, input: step.input });
  const deferred = ctx.stored.deferred;
  const written = deferred.length === 0 ? messages : [...deferred.map((entry) => entry.entry), ...messages];
  const result = await deps.store.commitStep({
    sessionId: params.sessionId,
    leaseToken: params.leaseToken,
    messages: written.map((entry) => ({
      inputSeq: params.input.seq,
      round: entry.round,
      kind: entry.kind ?? 'message',
      message: entry.message,
    })),
    ...(parts.pending !== undefined ? { pending: parts.pending } : {}),
    ...(parts.toolCalls !== undefined ? { toolCalls: parts.toolCalls } : {}),
    ...(parts.usageRounds !== undefined ? { usageRounds: parts.usageRounds } : {}),
    ...(parts.compaction !== undefined ? { compaction: parts.compaction } : {}),
    ...(parts.input !== undefined ? { input: parts.input } : {}),
    ...(step.steer !== undefined ? { steer: { seqs: step.steer.seqs, intoInputSeq: params.input.seq } } : {}),
  });
  const { seqs, moved } = settleDeferred(ctx, result.messageSeqs);
  ctx.stored.pendingInputs = result.pendingInputs;
  ctx.stored.pendingSteers = result.pendingSteers;
  if (parts.input !== undefined) {
    ctx.stored.finishedError = parts.input.errorCode === undefined ? null : { code: parts.input.errorCode, message: parts.input.errorMessage ?? '' };
  }
  if (parts.compaction !== undefined) {
    const folded = new Set(parts.compaction.foldSeqs);
    ctx.stored.window = ctx.stored.window.filter((row) => !folded.has(row.seq));
  }
  if (parts.pending !== undefined) ctx.stored.pending = parts.pending;
  appendToWindow(ctx, messages, seqs);
  // Thrown once the run's state matches what was written, so the failure's closing step is right.
  if (moved !== null) throw moved;
  return seqs;
}

/**
 * Puts messages into the run's window and announces them (`message_appended`) now, with the seqs the
 * store will give them, but writes them with the run's next step instead of a commit of their own.
 * For the input's own message: the step after the model's first reply — or the input's finish —
 * always follows, so the input costs one commit less. A run that stops before that step leaves them
 * unwritten, and the next holder appends them again, with the same seqs (the input is still running
 * and nothing else was written after it).
 */
export async function deferMessages(ctx: RunContext, entries: StepMessageInput[]): Promise<void> {
  const messages = storable(await runAppendHooks(ctx, entries));
  const seqs = messages.map((_, index) => ctx.stored.lastMessageSeq + index + 1);
  ctx.stored.deferred.push(...messages.map((entry, index) => ({ entry, seq: seqs[index]! })));
  appendToWindow(ctx, messages, seqs);
}

async function runAppendHooks(ctx: RunContext, entries: StepMessageInput[]): Promise<StepMessageInput[]> {
  const messages = [...entries];
  if (!ctx.deps.hooks.handles('message.append')) return messages;
  for (const [index, entry] of messages.entries()) {
    const append = Object.assign(hookScope(ctx), { message: entry.message });
    await ctx.deps.hooks.run('message.append', append);
    // Handlers may edit the message in place or replace it; what they leave is what is persisted.
    messages[index] = Object.assign({}, entry, { message: append.message });
  }
  return messages;
}

/**
 * The step's own seqs, and whether the deferred messages it carried got other seqs than they were
 * announced with. They are written either way: a mismatch (another writer under this lease) fails
 * the input, and its closing step must not write them twice.
 */
function settleDeferred(ctx: RunContext, seqs: number[]): { seqs: number[]; moved: StateCorruptError | null } {
  const deferred = ctx.stored.deferred;
  if (deferred.length === 0) return { seqs, moved: null };
  ctx.stored.deferred = [];
  const index = deferred.findIndex((entry, i) => seqs[i] !== entry.seq);
  const moved = index === -1 ? null : new StateCorruptError(`message announced as seq ${deferred[index]!.seq} was written as ${String(seqs[index])}`);
  return { seqs: seqs.slice(deferred.length), moved };
}

function appendToWindow(ctx: RunContext, messages: StepMessageInput[], seqs: number[]): void {
  const createdAt = new Date(ctx.deps.clock.now());
  messages.forEach((entry, index) => {
    const stored: StoredMessage = {
      seq: seqs[index]!,
      inputSeq: ctx.params.input.seq,
      round: entry.round,
      kind: entry.kind ?? 'message',
      state: 'active',
      message: entry.message,
      createdAt,
    };
    ctx.stored.window.push(stored);
  });
  ctx.stored.lastMessageSeq = seqs.at(-1) ?? ctx.stored.lastMessageSeq;
  seqs.forEach((seq, index) => {
    const entry = messages[index]!;
    emit(ctx, { type: 'message_appended', messageSeq: seq, role: entry.message.role, kind: entry.kind ?? 'message', roundIndex: entry.round });
  });
}
