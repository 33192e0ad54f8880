import { DEFAULT_SESSION_AGENT, optionalAgentName } from '../../../src/fleet/agent-name.js';
import { DEFAULT_TENANT, optionalTenant } from '../../../src/fleet/tenant-name.js';
/**
 * Row-level helpers of {@link InMemorySessionStore}: what the Postgres store does to a value on its
 * way into and out of a row, done in memory. Wherever possible they call the very validation and
 * codec functions the Postgres store uses (src/store), so the two cannot disagree on what is
 * accepted or on how a stored value reads back.
 */
import { InputInvalidError } from '../../../src/core/errors/index.js';
import type { StoredMessage } from '../../../src/core/messages.js';
import type * as Port from '../../../src/core/ports/session-store.js';
import {
  INPUT_STATUSES,
  type InputRecord,
  type InputResult,
  type InputStatus,
  type SessionRecord,
  type ToolCallRecord,
} from '../../../src/core/session-types.js';
import { assertNewSessionId } from '../../../src/fleet/session-id.js';
import { INPUT_ID_PATTERN } from '../../../src/fleet/input-id.js';
import { assertText, isPlainObject } from '../../../src/store/postgres/arguments.js';
import { toJsonText } from '../../../src/core/json-text.js';
import type { ValidatedStep } from '../../../src/store/steps/commit-step-schema.js';
import { decodeMessage, encodeMessage } from '../../../src/store/rows/message-row.js';

/**
 * A value as it reads back from a `jsonb` column: refused like the Postgres store refuses it
 * (BigInt, cycles, NUL, unpaired surrogates → `input.invalid`), `undefined` members dropped, and a fresh copy.
 */
export function jsonCopy<T>(value: T, what: string): T {
  return JSON.parse(toJsonText(value, what)) as T;
}

/** A `jsonb` column that may be SQL NULL: an absent value reads back as null. */
export function nullableJsonCopy(value: unknown, what: string): unknown {
  return value === undefined || value === null ? null : jsonCopy(value, what);
}

/** The fields of a new session row, with the column defaults of the `sessions` table. */
export function emptySessionRecord(id: string, at: Date): SessionRecord {
  return {
    id,
    agent: 'default',
    tenant: DEFAULT_TENANT,
    systemPrompt: null,
    metadata: {},
    config: {},
    status: 'idle',
    nextSeq: 0,
    nextMessageSeq: 0,
    lease: { owner: null, token: 0, expiresAt: null },
    pending: null,
    cancelRequestedAt: null,
    cascadeCancelledAt: null,
    parentSessionId: null,
    rootSessionId: id,
    depth: 0,
    spawn: null,
    stats: {
      inputs: 0,
      rounds: 0,
      llmCalls: 0, costUsd: 0, costPicoUsd: 0,
      toolCalls: 0,
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      totalTokens: 0,
      firstInputAt: null,
      lastInputAt: null,
    },
    createdAt: at,
    updatedAt: at,
  };
}

/** The checks `createSession` of the Postgres store makes, in its order; returns the profile to store. */
export function validateCreateSession(params: Port.CreateSessionParams): Pick<SessionRecord, 'id' | 'agent' | 'tenant' | 'systemPrompt' | 'metadata' | 'config'> {
  if (!isPlainObject(params)) throw new InputInvalidError('session parameters must be an object');
  const id = assertNewSessionId(params.id);
  const agent = optionalAgentName(params.agent) ?? DEFAULT_SESSION_AGENT;
  const tenant = optionalTenant(params.tenant) ?? DEFAULT_TENANT;
  const systemPrompt = params.systemPrompt ?? null;
  if (systemPrompt !== null && typeof systemPrompt !== 'string') throw new InputInvalidError('systemPrompt must be a string or null');
  if (systemPrompt !== null) toJsonText(systemPrompt, 'systemPrompt');
  return { id, agent, tenant, systemPrompt, metadata: jsonObject(params.metadata, 'metadata'), config: jsonObject(params.config, 'config') };
}

function jsonObject(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw new InputInvalidError(`${what} must be a plain JSON object`);
  return jsonCopy(value, what);
}

/** An input id to look up, refused as the Postgres store refuses it. */
export function assertInputId(inputId: unknown): string {
  if (typeof inputId === 'string' && INPUT_ID_PATTERN.test(inputId)) return inputId;
  throw new InputInvalidError('inputId must be 1 to 200 characters of letters, digits, "_", ".", ":", "@", "/" or "-"');
}

/** A deterministic tie-break between ids (calls started in the same step). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The resolved filters of `listInputs`, refused as the Postgres store refuses them. */
export function inputFilter(options: Port.ListInputsOptions): { statuses: InputStatus[] | null; afterSeq: number; limit: number } {
  const afterSeq = options.afterSeq ?? 0;
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new InputInvalidError('afterSeq must be a non-negative integer');
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new InputInvalidError('limit must be an integer from 1 to 1000');
  if (options.affectsRun !== undefined && typeof options.affectsRun !== 'boolean') throw new InputInvalidError('affectsRun must be a boolean');
  if (options.status === undefined) return { statuses: null, afterSeq, limit };
  const statuses = Array.isArray(options.status) ? options.status : [options.status];
  for (const status of statuses) {
    if (!(INPUT_STATUSES as readonly string[]).includes(status)) throw new InputInvalidError(`status must be one of ${INPUT_STATUSES.join(', ')}`);
  }
  return { statuses, afterSeq, limit };
}

/**
 * A step's JSON parts serialised the way the Postgres store serialises them before BEGIN, so the
 * same steps fail with `input.invalid` (a NUL character, a BigInt argument) and the stored values
 * read back the same.
 */
export interface SerialisedStep {
  messages: ValidatedStep['messages'];
  pending: ValidatedStep['pending'];
  toolCalls: Port.ToolCallWrite[];
  usageRounds: Port.UsageRoundWrite[];
  result: InputResult | null;
}

export function serialiseStep(step: ValidatedStep): SerialisedStep {
  toJsonText(step.messages.map((m) => encodeMessage(m.message, m.kind, m.inputSeq, m.round)), 'messages');
  return {
    messages: step.messages,
    pending: step.pending == null ? step.pending : jsonCopy(step.pending, 'pending'),
    toolCalls: jsonCopy(step.toolCalls, 'toolCalls') as Port.ToolCallWrite[],
    usageRounds: jsonCopy(step.usageRounds, 'usageRounds'),
    result: step.input?.result === undefined ? null : jsonCopy(step.input.result, 'input.result'),
  };
}

/** A step message as the Postgres store reads it back: flattened into columns and decoded again. */
export function storedMessage(sessionId: string, seq: number, entry: ValidatedStep['messages'][number], at: Date): StoredMessage {
  const columns = jsonCopy(encodeMessage(entry.message, entry.kind, entry.inputSeq, entry.round), 'message');
  return decodeMessage(sessionId, { toolCalls: null, toolCallId: null, name: null, ...columns, seq, state: 'active', createdAt: at });
}

/** Ledger statuses that end a call and stamp `finishedAt` (`in_doubt` does not: its end is unknown). */
const FINAL_TOOL_STATUSES = new Set(['completed', 'failed', 'aborted']);

/**
 * The ledger upsert of the Postgres store: a row starts with one attempt only when written as
 * `started`; writing `started` again counts another attempt and restarts the clock.
 */
export function upsertToolCall(sessionId: string, existing: ToolCallRecord | undefined, write: Port.ToolCallWrite, at: Date): ToolCallRecord {
  const started = write.status === 'started';
  return {
    sessionId,
    toolCallId: write.toolCallId,
    inputSeq: write.inputSeq,
    round: write.round,
    name: write.name,
    args: nullableJsonCopy(write.args, 'args'),
    status: write.status,
    attempts: (existing?.attempts ?? 0) + (started ? 1 : 0),
    idempotencyKey: `${sessionId}:${write.toolCallId}`,
    errorCode: write.errorCode ?? null,
    startedAt: existing === undefined || started ? at : existing.startedAt,
    finishedAt: FINAL_TOOL_STATUSES.has(write.status) ? at : null,
    durationMs: write.durationMs ?? null,
  };
}

/**
 * A pending input delivered into the running one (steering): done, naming its host; it gets the
 * host's result when the host finishes ({@link finishInput}).
 */
export function deliverSteered(input: InputRecord, intoInputSeq: number, at: Date): void {
  input.status = 'done';
  input.steeredInto = intoInputSeq;
  input.attempts += 1;
  input.startedAt ??= at;
  input.finishedAt = at;
}

/**
 * Ends a running input and adds its run to the session's cumulative stats, as the finish statement
 * does; the inputs steered into it finish with it: its result plus `steeredInto`, its error, its
 * finish time (I6).
 */
export function finishInput(
  record: SessionRecord,
  inputs: InputRecord[],
  transition: NonNullable<ValidatedStep['input']>,
  result: InputResult | null,
  at: Date,
): void {
  const input = inputs[transition.seq - 1]!;
  input.status = transition.status;
  input.result = result;
  input.errorCode = transition.errorCode ?? null;
  input.errorMessage = transition.errorMessage ?? null;
  input.finishedAt = at;
  for (const steered of inputs) {
    if (steered.steeredInto !== input.seq) continue;
    steered.result = result === null ? null : { ...structuredClone(result), steeredInto: input.seq };
    steered.errorCode = input.errorCode;
    steered.errorMessage = input.errorMessage;
    steered.finishedAt = at;
  }
  // A question still waiting (a send refused while it waits) keeps the session waiting.
  record.status = result?.status === 'waiting_for_input' || (record.pending?.interactions.length ?? 0) > 0 ? 'waiting_for_input' : 'idle';
  const stats = record.stats;
  stats.inputs += 1;
  if (result !== null) {
    stats.rounds += result.rounds;
    stats.llmCalls += result.usage.llmCalls;
    stats.toolCalls += result.toolCalls;
    stats.promptTokens += result.usage.promptTokens;
    stats.completionTokens += result.usage.completionTokens;
    stats.cachedTokens += result.usage.cachedTokens;
    stats.cacheWriteTokens += result.usage.cacheWriteTokens;
    stats.reasoningTokens += result.usage.reasoningTokens;
    stats.totalTokens += result.usage.totalTokens;
    // As the Postgres statement: the result's exact picodollars (0 in results from before costs).
    stats.costPicoUsd += result.usage.costPicoUsd ?? 0;
    stats.costUsd = stats.costPicoUsd / 1_000_000_000_000;
  }
  stats.firstInputAt ??= at;
  stats.lastInputAt = at;
}

/**
 * Whether a `waiting` input may run again, as `waitingReadySql` decides: a cancel was asked for on its
 * session, or every call it waits for has its `child:<toolCallId>` row in the inbox.
 */
export function waitingReady(record: SessionRecord, inputs: readonly InputRecord[], waiting: InputRecord): boolean {
  if (record.cancelRequestedAt !== null) return true;
  return (waiting.awaiting ?? []).every((id) => inputs.some((input) => input.inputId === `child:${id}`));
}

/**
 * The input a claim would take, as the claim statements find it: the lowest open one (`pending`,
 * `running` or `waiting`), unless it is a `waiting` one not ready — then none, as if the inbox were empty.
 */
export function claimableInput(record: SessionRecord, inputs: readonly InputRecord[]): InputRecord | undefined {
  const open = inputs.find((input) => input.status === 'pending' || input.status === 'running' || input.status === 'waiting');
  if (open === undefined || (open.status === 'waiting' && !waitingReady(record, inputs, open))) return undefined;
  return open;
}

/**
 * A session's child as `listChildren` reports it: the delivered result's status; else its first
 * input's outcome once ended; else the child session's status (`idle` read as `pending`).
 */
export function childStatus(child: SessionRecord, childInputs: readonly InputRecord[], delivered: InputRecord | undefined): string {
  const deliveredStatus = delivered?.payload['status'];
  if (typeof deliveredStatus === 'string') return deliveredStatus;
  const task = childInputs[0];
  if (task !== undefined && (task.status === 'done' || task.status === 'failed' || task.status === 'cancelled')) {
    return task.result?.status ?? (task.status === 'done' ? 'completed' : task.status);
  }
  return child.status === 'idle' ? 'pending' : child.status;
}
