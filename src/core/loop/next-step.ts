import type { LoopfleetError } from '../errors/index.js';
import type { BudgetRefusal } from '../ports/budgets.js';
import type { ToolCallWrite, UsageRoundWrite } from '../ports/session-store.js';
import type { RunOutcome } from '../session-types.js';
import type { StepMessageInput } from './step-input.js';

/**
 * What a phase of the run asks for next: the loop's continuation as data. A phase never ends the run
 * itself; it says how the run should end and the round loop commits that, in the run's one terminal
 * step. A new way for a round to end is a new case here, not a new place that finishes the run.
 */
export type NextStep = ContinueStep | EndStep;

/** The steps that end the run. */
export type EndStep = FinishStep | WaitStep;

/** Go on: the next phase, or the next round. */
export interface ContinueStep {
  kind: 'continue';
}

/** The one {@link ContinueStep}: going on allocates nothing. */
export const CONTINUE: ContinueStep = Object.freeze({ kind: 'continue' });

/** What the terminal step writes besides the input's status and result. */
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
  /** The budget that refused the next model call, recorded in the result (`budget_exceeded`). */
  budget?: BudgetRefusal;
  /** False to commit `messages` without running `message.append` hooks (see `StepInput.appendHooks`). */
  appendHooks?: false;
}

/** The run is over: its input ends with `status`, and `text` is the result's final text. */
export interface FinishStep extends FinishOptions {
  kind: 'finish';
  status: Exclude<RunOutcome, 'waiting_for_input' | 'waiting_for_children'>;
  text: string;
}

/**
 * The run stops until something outside it answers: a question to the user waits for its `submit`.
 * The input ends `waiting_for_input`; the session's pending state keeps what it waits for.
 */
export type WaitStep = InputWait | ChildrenWait;

interface InputWait {
  kind: 'wait';
  reason: 'waiting_for_input';
  /** The reply that asked, as the result's final text. */
  text: string;
  /** Rounds to report; defaults to the rounds run. */
  rounds?: number;
}

/**
 * The run parks until child sessions answer (docs/child-sessions.md): the input is not finished but
 * `waiting`, with the `spawn_agent` calls it waits for; it runs on once their results are delivered.
 */
export interface ChildrenWait {
  kind: 'wait';
  reason: 'waiting_for_children';
  /** The tool call ids whose child results the input waits for. */
  awaiting: string[];
  text: string;
}

/** A {@link WaitStep} for a question to the user. */
export function waitForInput(text: string, rounds?: number): WaitStep {
  return rounds === undefined ? { kind: 'wait', reason: 'waiting_for_input', text } : { kind: 'wait', reason: 'waiting_for_input', text, rounds };
}
