import type pg from 'pg';
import { z } from 'zod';
import { StateConflictError } from '../core/errors/index.js';
import type { StepCommit, StepCommitResult } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { assertLeaseToken, toJsonText } from './arguments.js';
import { validateStep, type ValidatedStep } from './commit-step-validation.js';
import { leaseLost } from './fence.js';
import { encodeMessage } from './rows/message-row.js';
import { parseRow } from './rows/parse-row.js';
import { commitStepStatement, STEP_REFUSAL_SQL, type CommitStepStatement, type StepParam, type StepParts } from './sql/commit-step.js';
import { LOCK_FENCED_SESSION_SQL } from './sql/lock-fenced-session.js';

/** A validated step with its JSON parameters already serialised (so that can fail before any I/O). */
interface PreparedStep {
  sessionId: string;
  leaseToken: number;
  step: ValidatedStep;
  messagesText: string;
  pendingText: string | null;
  toolCallsText: string;
  usageRoundsText: string;
  compactionText: string | null;
  resultText: string | null;
}

const committedSchema = z.object({ baseSeq: z.number().int().nonnegative(), pendingInputs: z.boolean() });

const refusalSchema = z.object({
  leaseHeld: z.boolean(),
  activeFolds: z.number().int().nonnegative(),
  hostRunning: z.boolean(),
  pendingSteered: z.number().int().nonnegative(),
  finishRunning: z.boolean(),
});

/**
 * Applies one step of a run in one fenced statement, one round trip (DESIGN.md I3, §9): the fence and
 * message-seq allocation, messages, compaction, tool ledger, usage, steering and the input's end.
 * Any refusal — `lease.lost`, `state.conflict` — writes none of it, so a step is never half-applied.
 */
export async function commitStep(pool: pg.Pool, step: StepCommit): Promise<StepCommitResult> {
  const prepared = prepare(step);
  // Each variant is prepared under its own name, once per connection: planning its sub-statements
  // costs several times executing them, so later steps with the same parts reuse the plan.
  const statement = commitStepStatement(stepParts(prepared.step));
  const values = stepValues(prepared);
  const params = statement.params.map((param) => values[param]);
  const committed = await runStep(pool, prepared, statement, params);
  if (committed !== undefined) return committed;
  // Refused, nothing written. The statement checked its preconditions on the snapshot it began with,
  // and a failed check skips the session row without waiting for its lock: an input accepted after
  // that snapshot (its accept may still hold the row) is invisible, so a step steering it is refused
  // although it holds once that accept commits. Wait for the row as a transaction's fence would, then
  // try once more on a fresh snapshot; only a second refusal is final.
  const fenced = await pool.query(LOCK_FENCED_SESSION_SQL, [prepared.sessionId, prepared.leaseToken]);
  if (fenced.rowCount !== 1) throw leaseLost(prepared.sessionId, prepared.leaseToken, 'commitStep');
  const retried = await runStep(pool, prepared, statement, params);
  if (retried !== undefined) return retried;
  throw await refusal(pool, prepared);
}

/** Runs the step's statement; undefined when it was refused (and wrote nothing). */
async function runStep(
  pool: pg.Pool,
  prepared: PreparedStep,
  statement: CommitStepStatement,
  values: unknown[],
): Promise<StepCommitResult | undefined> {
  const result = await pool.query({ name: statement.name, text: statement.text, values });
  const row = result.rows[0] as unknown;
  if (row === undefined) return undefined;
  const { baseSeq, pendingInputs } = parseRow(committedSchema, row, `session ${prepared.sessionId}`);
  return { messageSeqs: prepared.step.messages.map((_, index) => baseSeq + index + 1), pendingInputs };
}

function prepare(raw: StepCommit): PreparedStep {
  const sessionId = assertSessionId(raw.sessionId);
  const leaseToken = assertLeaseToken(raw.leaseToken);
  const step = validateStep(raw);
  const rows = step.messages.map((m) => encodeMessage(m.message, m.kind, m.inputSeq, m.round));
  return {
    sessionId,
    leaseToken,
    step,
    messagesText: toJsonText(rows, 'messages'),
    pendingText: step.pending == null ? null : toJsonText(step.pending, 'pending'),
    toolCallsText: toJsonText(step.toolCalls, 'toolCalls'),
    usageRoundsText: toJsonText(step.usageRounds, 'usageRounds'),
    compactionText: compactionRecord(step),
    resultText: step.input?.result === undefined ? null : toJsonText(step.input.result, 'input.result'),
  };
}

/**
 * The compaction record as the statement reads it. Without an explicit note seq, the note is the
 * step's first `compact_note` message, named by its 1-based place among the step's messages (its seq
 * is known only once the fence has allocated them).
 */
function compactionRecord(step: ValidatedStep): string | null {
  const compaction = step.compaction;
  if (compaction === undefined) return null;
  const { noteSeq, inputSeq, ...rest } = compaction.record;
  const noteOrdinal = noteSeq === undefined ? step.messages.findIndex((message) => message.kind === 'compact_note') + 1 : null;
  return toJsonText({ ...rest, noteSeq: noteSeq ?? null, noteOrdinal, inputSeq: inputSeq ?? null }, 'compaction');
}

/** The parts the step has; an empty list is no part (it would write nothing). */
function stepParts(step: ValidatedStep): StepParts {
  return {
    messages: step.messages.length > 0,
    pending: step.pending !== undefined,
    compaction: step.compaction !== undefined,
    ledger: step.toolCalls.length > 0,
    usage: step.usageRounds.length > 0,
    steer: step.steer !== undefined,
    finish: step.input !== undefined,
  };
}

/** Every value a step statement may take; its variant picks the ones it uses. */
function stepValues(prepared: PreparedStep): Record<StepParam, unknown> {
  const { step } = prepared;
  const input = step.input;
  return {
    sessionId: prepared.sessionId,
    leaseToken: prepared.leaseToken,
    messages: prepared.messagesText,
    pending: prepared.pendingText,
    toolCalls: prepared.toolCallsText,
    usageRounds: prepared.usageRoundsText,
    foldSeqs: step.compaction?.foldSeqs ?? null,
    compaction: prepared.compactionText,
    steeredSeqs: step.steer?.seqs ?? [],
    hostSeq: step.steer?.intoInputSeq ?? null,
    finishSeq: input?.seq ?? null,
    finishStatus: input?.status ?? null,
    result: prepared.resultText,
    errorCode: input?.errorCode ?? null,
    errorMessage: input?.errorMessage ?? null,
  };
}

/**
 * The error of a step refused on a fresh snapshot, told apart by one more read: `lease.lost` unless
 * the token is still current, else the `state.conflict` of the first precondition that failed, in the
 * order the parts apply (compaction, steering, finishing).
 */
async function refusal(pool: pg.Pool, prepared: PreparedStep): Promise<Error> {
  const { sessionId, leaseToken, step } = prepared;
  const read = await pool.query(STEP_REFUSAL_SQL, [
    sessionId,
    leaseToken,
    step.messages.length,
    step.compaction?.foldSeqs ?? [],
    step.steer?.intoInputSeq ?? null,
    step.steer?.seqs ?? [],
    step.input?.seq ?? null,
  ]);
  const row = read.rows[0] as unknown;
  if (row === undefined) return leaseLost(sessionId, leaseToken, 'commitStep');
  const state = parseRow(refusalSchema, row, `session ${sessionId}`);
  if (!state.leaseHeld) return leaseLost(sessionId, leaseToken, 'commitStep');
  const { compaction, steer, input } = step;
  if (compaction !== undefined && state.activeFolds !== compaction.foldSeqs.length) {
    return new StateConflictError(
      `compaction of session ${sessionId} names ${compaction.foldSeqs.length} messages but only ${state.activeFolds} are active`,
      { details: { sessionId, foldSeqs: compaction.foldSeqs } },
    );
  }
  if (steer !== undefined && (!state.hostRunning || state.pendingSteered !== steer.seqs.length)) {
    return new StateConflictError(
      `steering into input ${steer.intoInputSeq} of session ${sessionId} needs it running and inputs ${steer.seqs.join(', ')} pending`,
      { details: { sessionId, seqs: steer.seqs, intoInputSeq: steer.intoInputSeq } },
    );
  }
  if (input !== undefined && !state.finishRunning) {
    return new StateConflictError(`input ${input.seq} of session ${sessionId} is not running, so it cannot become ${input.status}`, {
      details: { sessionId, seq: input.seq, status: input.status },
    });
  }
  // Only a concurrent step under the same token (a caller bug) can change what the step checked.
  return new StateConflictError(`step of session ${sessionId} was refused: the state it checked changed under the same lease`, {
    details: { sessionId, leaseToken },
  });
}
