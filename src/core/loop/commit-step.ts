import type { Message, MessageKind, StoredMessage } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import type { CompactionWrite, InputTransition, ToolCallWrite, UsageRoundWrite } from '../ports/session-store.js';
import { emit } from './emit.js';
import type { RunContext } from './run-context.js';

export interface StepMessageInput {
  round: number | null;
  kind?: MessageKind;
  message: Message;
}

/** What one step of a run writes; see `StepCommit` for the semantics of each part. */
export interface StepInput {
  messages?: StepMessageInput[];
  pending?: PendingState | null;
  toolCalls?: ToolCallWrite[];
  usageRounds?: UsageRoundWrite[];
  compaction?: CompactionWrite;
  input?: InputTransition;
  /** Pending steer inputs delivered into this run by this step. */
  steer?: { seqs: number[] };
  /** False to skip the `message.append` hooks: for the synthetic results that record a failed run. */
  appendHooks?: boolean;
}

/**
 * Commits one step in one fenced transaction, then brings the in-memory run state in line with what
 * was written (window, pending) and publishes `message_appended`. `message.append` hooks run first
 * and may change what is persisted.
 */
export async function commitStep(ctx: RunContext, step: StepInput): Promise<number[]> {
  const { deps, params } = ctx;
  const messages = [...(step.messages ?? [])];
  if (step.appendHooks !== false && deps.hooks.handles('message.append')) {
    for (const [index, entry] of messages.entries()) {
      const append = { message: entry.message };
      await deps.hooks.run('message.append', append);
      // Handlers may edit the message in place or replace it; what they leave is what is persisted.
      messages[index] = { ...entry, message: append.message };
    }
  }
  const result = await deps.store.commitStep({
    sessionId: params.sessionId,
    leaseToken: params.leaseToken,
    messages: messages.map((entry) => ({
      inputSeq: params.input.seq,
      round: entry.round,
      kind: entry.kind ?? 'message',
      message: entry.message,
    })),
    ...(step.pending !== undefined ? { pending: step.pending } : {}),
    ...(step.toolCalls !== undefined ? { toolCalls: step.toolCalls } : {}),
    ...(step.usageRounds !== undefined ? { usageRounds: step.usageRounds } : {}),
    ...(step.compaction !== undefined ? { compaction: step.compaction } : {}),
    ...(step.input !== undefined ? { input: step.input } : {}),
    ...(step.steer !== undefined ? { steer: { seqs: step.steer.seqs, intoInputSeq: params.input.seq } } : {}),
  });
  ctx.pendingInputs = result.pendingInputs;
  ctx.pendingSteers = result.pendingSteers;
  if (step.input !== undefined) {
    ctx.finishedError = step.input.errorCode === undefined ? null : { code: step.input.errorCode, message: step.input.errorMessage ?? '' };
  }
  applyToWindow(ctx, step, messages, result.messageSeqs);
  if (step.pending !== undefined) ctx.pending = step.pending;
  ctx.lastMessageSeq = result.messageSeqs.at(-1) ?? ctx.lastMessageSeq;
  result.messageSeqs.forEach((seq, index) => {
    const entry = messages[index]!;
    emit(ctx, { type: 'message_appended', messageSeq: seq, role: entry.message.role, kind: entry.kind ?? 'message', roundIndex: entry.round });
  });
  return result.messageSeqs;
}

function applyToWindow(ctx: RunContext, step: StepInput, messages: StepMessageInput[], seqs: number[]): void {
  if (step.compaction !== undefined) {
    const folded = new Set(step.compaction.foldSeqs);
    ctx.window = ctx.window.filter((row) => !folded.has(row.seq));
  }
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
    ctx.window.push(stored);
  });
}
