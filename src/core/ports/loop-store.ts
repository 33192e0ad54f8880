import type { SessionRecord, InputRecord } from '../session-types.js';
import type { ListInputsOptions, RunState, StepCommit, StepCommitResult } from './store-records.js';

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
}
