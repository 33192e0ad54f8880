import type { SessionRecord, InputRecord } from '../session-types.js';
import type { ListInputsOptions, ParkInputParams, RunState, StepCommit, StepCommitResult } from './store-records.js';

/**
 * The store as the agent loop uses it: rebuild a run, check for steering inputs, commit each step.
 * Every method may also throw `session.invalid_id`.
 */
export interface LoopStore {
  getSession(sessionId: string): Promise<SessionRecord | null>;
  /** The window, the input's usage rows and the open ledger rows, read together (one round trip). */
  loadRunState(sessionId: string, inputSeq: number): Promise<RunState>;
  /** Inputs in seq order. */
  listInputs(sessionId: string, options?: ListInputsOptions): Promise<InputRecord[]>;
  /** Fenced. Applies one step's writes atomically. */
  commitStep(step: StepCommit): Promise<StepCommitResult>;
  /**
   * Fenced. The running input waits for child sessions: `waiting` with the calls it waits for, the
   * session `waiting_for_children`. Not terminal: no result, no stats. A claim makes it `running`
   * again once a child result has been delivered for every call in `awaiting`, or a cancel was asked for.
   */
  parkInput(params: ParkInputParams): Promise<void>;
}
