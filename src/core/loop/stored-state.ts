import type { StoredMessage } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import type { StepMessageInput } from './step-input.js';

/**
 * The session as the run's own commits left it, mirrored in memory so a round costs no re-read of
 * the history. Written by `commitStep` alone (and `deferMessages`, its other half): whatever a phase
 * writes reaches it only through a step, so it never says anything the store does not hold.
 */
export interface StoredState {
  /** The session's active messages, kept current as steps commit. */
  window: StoredMessage[];
  pending: PendingState | null;
  /** Seq of the last message written to the session (or deferred); the next append gets the one after. */
  lastMessageSeq: number;
  /**
   * Messages in `window` and announced, with the seqs the store will give them, that the run's next
   * step writes first (`deferMessages`): the input's own message.
   */
  deferred: { entry: StepMessageInput; seq: number }[];
  /** Whether the session had pending inputs as of the last commit (or the claim). */
  pendingInputs: boolean;
  /** Whether one of them would change this run, as of the last commit (or the claim): steering looks only then. */
  pendingSteers: boolean;
  /** The error the input was finished with, once its terminal step committed. */
  finishedError?: { code: string; message: string } | null;
}
