import type { Message, MessageKind } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import type { CompactionWrite, InputTransition, ToolCallWrite, UsageRoundWrite } from '../ports/session-store.js';

/** One message a step writes: its round (`null` for the input's own message) and its kind. */
export interface StepMessageInput {
  round: number | null;
  kind?: MessageKind;
  message: Message;
}

/**
 * What one step of a run writes; see `StepCommit` for the semantics of each part. A type of its own
 * because the run's state (the deferred messages) and every phase that commits name it.
 */
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
