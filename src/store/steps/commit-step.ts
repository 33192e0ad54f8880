import type pg from 'pg';
import { z } from 'zod';
import { StateConflictError } from '../../core/errors/index.js';
import type { StepCommit, StepCommitResult } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertLeaseToken } from '../postgres/arguments.js';
import { toJsonText } from '../../core/json-text.js';
import type { ValidatedStep } from './commit-step-schema.js';
import { validateStep } from './commit-step-validation.js';
import { leaseLost } from '../fencing/fence.js';
import { encodeMessage } from '../rows/message-row.js';
import { parseRow } from '../rows/parse-row.js';
import { commitStepStatement, STEP_REFUSAL_SQL, type StepField } from './commit-step-sql.js';
import type { StepParts } from './step-parts.js';
import { LOCK_FENCED_SESSION_SQL } from '../fencing/lock-fenced-session-sql.js';
import { runBatchStatement, type BatchedRow, type RowBatcher } from '../batching/row-batcher.js';

/** A validated step with its statement record already serialised (so that can fail before any I/O). */
interface PreparedStep extends BatchedRow {
  leaseToken: number;
  step: ValidatedStep;
}

const committedSchema = z.object({
  sessionId: z.string(),
  baseSeq: z.number().int().nonnegative(),
  pendingInputs: z.boolean(),
  pendingSteers: z.boolean(),
});

const refusalSchema = z.object({
  leaseHeld: z.boolean(),
  activeFolds: z.number().int().nonnegative(),
  hostRunning: z.boolean(),
  pendingSteered: z.number().int().nonnegative(),
  finishRunning: z.boolean(),
});

/**
 * Applies one step of a run in one fenced statement (I3; docs/store.md): the fence and message-seq
 * allocation, messages, compaction, tool ledger, usage, steering and the input's end. The statement
 * may carry steps of other sessions ready at the same moment (`batcher`); each is fenced on its own.
 * Any refusal — `lease.lost`, `state.conflict` — writes none of it, so a step is never half-applied.
 */
export async function commitStep(pool: pg.Pool, batcher: RowBatcher, step: StepCommit): Promise<StepCommitResult> {
  const prepared = prepare(step);
  const committed = toResult(prepared, await batcher.submit(prepared));
  if (committed !== undefined) return committed;
  // Refused, nothing written. The statement checked its preconditions on the snapshot it began with,
  // and a failed check skips the session row without waiting for its lock: an input accepted after
  // that snapshot (its accept may still hold the row) is invisible, so a step steering it is refused
  // although it holds once that accept commits. Wait for the row as a transaction's fence would, then
  // try once more, alone, on a fresh snapshot; only a second refusal is final.
  const fenced = await pool.query(LOCK_FENCED_SESSION_SQL, [prepared.sessionId, prepared.leaseToken]);
  if (fenced.rowCount !== 1) throw leaseLost(prepared.sessionId, prepared.leaseToken, 'commitStep');
  const retried = toResult(prepared, (await runBatchStatement(pool, prepared.statement, [prepared])).get(prepared.sessionId));
  if (retried !== undefined) return retried;
  throw await refusal(pool, prepared);
}

/** The step's result from its row of the statement; undefined when it has none (it was refused). */
function toResult(prepared: PreparedStep, row: unknown): StepCommitResult | undefined {
  if (row === undefined) return undefined;
  const { baseSeq, pendingInputs, pendingSteers } = parseRow(committedSchema, row, `session ${prepared.sessionId}`);
  return { messageSeqs: prepared.step.messages.map((_, index) => baseSeq + index + 1), pendingInputs, pendingSteers };
}

function prepare(raw: StepCommit): PreparedStep {
  const sessionId = assertSessionId(raw.sessionId);
  const leaseToken = assertLeaseToken(raw.leaseToken);
  const step = validateStep(raw);
  // Each variant is prepared under its own name, once per connection: planning its sub-statements
  // costs several times executing them, so later steps with the same parts reuse the plan.
  const statement = commitStepStatement(stepParts(step));
  // The record holds only the fields the variant reads; each value is JSON text already.
  const record = `{${statement.fields.map((field) => `"${field}":${fieldText(field, sessionId, leaseToken, step)}`).join(',')}}`;
  return { sessionId, leaseToken, step, statement, record };
}

/**
 * The compaction record as the statement reads it. Without an explicit note seq, the note is the
 * step's first `compact_note` message, named by its 1-based place among the step's messages (its seq
 * is known only once the fence has allocated them).
 */
function compactionRecord(step: ValidatedStep): string {
  const compaction = step.compaction;
  if (compaction === undefined) return 'null';
  const { noteSeq, inputSeq, ...rest } = compaction.record;
  const noteOrdinal = noteSeq === undefined ? step.messages.findIndex((message) => message.kind === 'compact_note') + 1 : null;
  return toJsonText(Object.assign({}, rest, { noteSeq: noteSeq ?? null, noteOrdinal, inputSeq: inputSeq ?? null }), 'compaction');
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

/**
 * One field of a step's record as JSON text. A value that may fail to serialise (the step's own
 * content) is checked by `toJsonText`, naming it, before any I/O.
 */
function fieldText(field: StepField, sessionId: string, leaseToken: number, step: ValidatedStep): string {
  const input = step.input;
  switch (field) {
    case 'session_id':
      return JSON.stringify(sessionId);
    case 'lease_token':
      return String(leaseToken);
    case 'messages':
      return toJsonText(
        step.messages.map((m) => encodeMessage(m.message, m.kind, m.inputSeq, m.round)),
        'messages',
      );
    case 'pending':
      return step.pending == null ? 'null' : toJsonText(step.pending, 'pending');
    case 'tool_calls':
      return toJsonText(step.toolCalls, 'toolCalls');
    case 'usage_rounds':
      return toJsonText(step.usageRounds, 'usageRounds');
    case 'fold_seqs':
      return JSON.stringify(step.compaction?.foldSeqs ?? null);
    case 'compaction':
      return compactionRecord(step);
    case 'steered_seqs':
      return JSON.stringify(step.steer?.seqs ?? []);
    case 'host_seq':
      return JSON.stringify(step.steer?.intoInputSeq ?? null);
    case 'finish_seq':
      return JSON.stringify(input?.seq ?? null);
    case 'finish_status':
      return JSON.stringify(input?.status ?? null);
    case 'result':
      return input?.result === undefined ? 'null' : toJsonText(input.result, 'input.result');
    case 'error_code':
      return toJsonText(input?.errorCode ?? null, 'input.errorCode');
    case 'error_message':
      return toJsonText(input?.errorMessage ?? null, 'input.errorMessage');
  }
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
