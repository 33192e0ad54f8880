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
import { APPEND_MESSAGES_SQL } from './sql/append-messages.js';
import { DELIVER_STEER_SQL } from './sql/deliver-steer.js';
import { FENCE_STEP_SQL } from './sql/fence-step.js';
import { FINISH_INPUT_SQL } from './sql/finish-input.js';
import { FOLD_MESSAGES_SQL } from './sql/fold-messages.js';
import { UPSERT_TOOL_CALLS_SQL } from './sql/upsert-tool-calls.js';
import { UPSERT_USAGE_ROUNDS_SQL } from './sql/upsert-usage-rounds.js';
import { withTransaction } from './transaction.js';

/** A validated step with its JSON parameters already serialised (so that can fail before BEGIN). */
interface PreparedStep {
  sessionId: string;
  leaseToken: number;
  step: ValidatedStep;
  messagesText: string;
  pendingText: string | null;
  toolCallsText: string;
  usageRoundsText: string;
  resultText: string | null;
}

const baseSeqSchema = z.object({ baseSeq: z.number().int().nonnegative() });
const foldedSchema = z.object({ foldedMessages: z.number().int().nonnegative() });
const deliveredSchema = z.object({ delivered: z.number().int().nonnegative() });

/**
 * Applies one step of a run in one fenced transaction (DESIGN.md I3, §9): the fence and message-seq
 * allocation, then messages, compaction, tool ledger, usage, steering and the input's end. Any refusal —
 * `lease.lost`, `state.conflict` — rolls all of it back, so a step is never half-applied.
 */
export async function commitStep(pool: pg.Pool, step: StepCommit): Promise<StepCommitResult> {
  const prepared = prepare(step);
  return withTransaction(pool, async (client) => {
    const baseSeq = await fence(client, prepared);
    const messageSeqs = prepared.step.messages.map((_, index) => baseSeq + index + 1);
    if (messageSeqs.length > 0) {
      await client.query(APPEND_MESSAGES_SQL, [prepared.sessionId, baseSeq, prepared.messagesText]);
    }
    if (prepared.step.compaction !== undefined) await fold(client, prepared, messageSeqs);
    if (prepared.step.toolCalls.length > 0) {
      await client.query(UPSERT_TOOL_CALLS_SQL, [prepared.sessionId, prepared.toolCallsText]);
    }
    if (prepared.step.usageRounds.length > 0) {
      await client.query(UPSERT_USAGE_ROUNDS_SQL, [prepared.sessionId, prepared.usageRoundsText]);
    }
    if (prepared.step.steer !== undefined) await deliverSteer(client, prepared);
    if (prepared.step.input !== undefined) await finishInput(client, prepared);
    return { messageSeqs };
  });
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
    resultText: step.input?.result === undefined ? null : toJsonText(step.input.result, 'input.result'),
  };
}

/** The fence; returns the last message seq before this step. */
async function fence(client: pg.PoolClient, prepared: PreparedStep): Promise<number> {
  const setPending = prepared.step.pending !== undefined;
  const fenced = await client.query(FENCE_STEP_SQL, [
    prepared.sessionId,
    prepared.leaseToken,
    prepared.step.messages.length,
    setPending,
    prepared.pendingText,
  ]);
  if (fenced.rows[0] === undefined) throw leaseLost(prepared.sessionId, prepared.leaseToken, 'commitStep');
  return parseRow(baseSeqSchema, fenced.rows[0], `session ${prepared.sessionId}`).baseSeq;
}

async function fold(client: pg.PoolClient, prepared: PreparedStep, messageSeqs: number[]): Promise<void> {
  const { sessionId, step } = prepared;
  const compaction = step.compaction;
  if (compaction === undefined) return;
  const record = compaction.record;
  const noteIndex = step.messages.findIndex((message) => message.kind === 'compact_note');
  const noteSeq = record.noteSeq ?? messageSeqs[noteIndex];
  const result = await client.query(FOLD_MESSAGES_SQL, [
    sessionId,
    compaction.foldSeqs,
    noteSeq,
    record.inputSeq ?? null,
    record.fromSeq,
    record.toSeq,
    record.estimatedTokensBefore,
    record.estimatedTokensAfter,
    record.model,
  ]);
  const { foldedMessages } = parseRow(foldedSchema, result.rows[0], `compaction of session ${sessionId}`);
  if (foldedMessages !== compaction.foldSeqs.length) {
    throw new StateConflictError(
      `compaction of session ${sessionId} names ${compaction.foldSeqs.length} messages but only ${foldedMessages} are active`,
      { details: { sessionId, foldSeqs: compaction.foldSeqs } },
    );
  }
}

async function deliverSteer(client: pg.PoolClient, prepared: PreparedStep): Promise<void> {
  const { sessionId, step } = prepared;
  const steer = step.steer;
  if (steer === undefined) return;
  const result = await client.query(DELIVER_STEER_SQL, [sessionId, steer.seqs, steer.intoInputSeq]);
  const { delivered } = parseRow(deliveredSchema, result.rows[0], `steering of session ${sessionId}`);
  if (delivered !== steer.seqs.length) {
    throw new StateConflictError(
      `steering into input ${steer.intoInputSeq} of session ${sessionId} needs it running and inputs ${steer.seqs.join(', ')} pending`,
      { details: { sessionId, seqs: steer.seqs, intoInputSeq: steer.intoInputSeq } },
    );
  }
}

async function finishInput(client: pg.PoolClient, prepared: PreparedStep): Promise<void> {
  const { sessionId, step } = prepared;
  const input = step.input;
  if (input === undefined) return;
  const result = input.result;
  const usage = result?.usage;
  const finished = await client.query(FINISH_INPUT_SQL, [
    sessionId,
    input.seq,
    input.status,
    prepared.resultText,
    input.errorCode ?? null,
    input.errorMessage ?? null,
    result?.status === 'waiting_for_input' ? 'waiting_for_input' : 'idle',
    result?.rounds ?? 0,
    usage?.llmCalls ?? 0,
    result?.toolCalls ?? 0,
    usage?.promptTokens ?? 0,
    usage?.completionTokens ?? 0,
    usage?.cachedTokens ?? 0,
    usage?.reasoningTokens ?? 0,
    usage?.totalTokens ?? 0,
  ]);
  if (finished.rowCount !== 1) {
    throw new StateConflictError(`input ${input.seq} of session ${sessionId} is not running, so it cannot become ${input.status}`, {
      details: { sessionId, seq: input.seq, status: input.status },
    });
  }
}
