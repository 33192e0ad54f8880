import {
  LeaseLostError,
  SessionExistsError,
  SessionNotFoundError,
  StateConflictError,
} from '../../../src/core/errors/index.js';
import type { StoredMessage } from '../../../src/core/messages.js';
import type * as Port from '../../../src/core/ports/session-store.js';
import { assertSessionId } from '../../../src/core/session-id.js';
import type {
  InputRecord,
  SessionRecord,
  ToolCallRecord,
  UsageRoundRecord,
} from '../../../src/core/session-types.js';
import { validateAcceptInput } from '../../../src/store/accept-input-validation.js';
import { validateStep } from '../../../src/store/commit-step-validation.js';

interface SessionData {
  record: SessionRecord;
  inputs: InputRecord[];
  messages: StoredMessage[];
  toolCalls: Map<string, ToolCallRecord>;
  usage: Map<string, UsageRoundRecord>;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * The `SessionStore` port in memory, for unit tests of the loop. It keeps the same contract as the
 * Postgres store — fencing, gapless seqs, idempotent accepts, atomic steps — and the shared contract
 * suite (test/contract) runs against both so it cannot drift.
 */
export class InMemorySessionStore implements Port.SessionStore {
  readonly #sessions = new Map<string, SessionData>();
  /** Commits applied so far; tests use it to crash after a given step. */
  commits = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  async createSession(params: Port.CreateSessionParams): Promise<SessionRecord> {
    const id = assertSessionId(params.id);
    if (this.#sessions.has(id)) throw new SessionExistsError(`session ${id} already exists`);
    const data = this.#newSession(id);
    data.record.agent = params.agent ?? 'default';
    data.record.systemPrompt = params.systemPrompt ?? null;
    data.record.metadata = clone(params.metadata ?? {});
    data.record.config = clone(params.config ?? {});
    return clone(data.record);
  }

  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const data = this.#sessions.get(assertSessionId(sessionId));
    return data === undefined ? null : clone(data.record);
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.#sessions.delete(assertSessionId(sessionId));
  }

  async acceptInput(params: Port.AcceptInputParams): Promise<Port.AcceptedInput> {
    const valid = validateAcceptInput(params);
    const data = this.#sessions.get(valid.sessionId) ?? this.#newSession(valid.sessionId);
    const existing = data.inputs.find((input) => input.inputId === valid.inputId);
    if (existing !== undefined) return { sessionId: valid.sessionId, seq: existing.seq, inputId: existing.inputId, duplicate: true };
    const seq = data.record.nextSeq + 1;
    data.record.nextSeq = seq;
    data.inputs.push({
      sessionId: valid.sessionId,
      seq,
      inputId: valid.inputId,
      kind: valid.kind,
      mode: valid.mode,
      payload: JSON.parse(valid.payloadText) as Record<string, unknown>,
      status: 'pending',
      attempts: 0,
      result: null,
      errorCode: null,
      errorMessage: null,
      originJobId: valid.originJobId,
      acceptedAt: new Date(this.now()),
      startedAt: null,
      finishedAt: null,
    });
    return { sessionId: valid.sessionId, seq, inputId: valid.inputId, duplicate: false };
  }

  async acquireLease(params: Port.AcquireLeaseParams): Promise<Port.LeaseAcquisition> {
    const data = this.#require(params.sessionId);
    const lease = data.record.lease;
    const now = this.now();
    if (lease.expiresAt !== null && lease.expiresAt.getTime() > now) {
      return { acquired: false, holder: lease.owner, retryAfterMs: lease.expiresAt.getTime() - now };
    }
    lease.token += 1;
    lease.owner = params.owner;
    lease.expiresAt = new Date(now + params.ttlMs);
    return { acquired: true, token: lease.token, expiresAt: new Date(lease.expiresAt) };
  }

  async renewLease(params: Port.RenewLeaseParams): Promise<Date> {
    const lease = this.#fenced(params.sessionId, params.token).record.lease;
    lease.expiresAt = new Date(this.now() + params.ttlMs);
    return new Date(lease.expiresAt);
  }

  async releaseLease(params: Port.ReleaseLeaseParams): Promise<boolean> {
    const data = this.#sessions.get(assertSessionId(params.sessionId));
    if (data === undefined || data.record.lease.token !== params.token || data.record.lease.expiresAt === null) return false;
    data.record.lease.owner = null;
    data.record.lease.expiresAt = null;
    return true;
  }

  async claimNextInput(params: Port.FencedParams): Promise<Port.ClaimedInput | null> {
    const data = this.#fenced(params.sessionId, params.leaseToken);
    const input = data.inputs.find((entry) => entry.status === 'pending' || entry.status === 'running');
    if (input === undefined) return null;
    const resumed = input.status === 'running';
    input.status = 'running';
    input.attempts += 1;
    input.startedAt ??= new Date(this.now());
    data.record.status = 'running';
    return { input: clone(input), resumed };
  }

  async commitStep(step: Port.StepCommit): Promise<Port.StepCommitResult> {
    const valid = validateStep(step);
    const data = this.#fenced(step.sessionId, step.leaseToken);
    this.#checkStep(data, valid);
    const seqs = valid.messages.map((entry, index) => {
      const seq = data.record.nextMessageSeq + index + 1;
      data.messages.push({ seq, inputSeq: entry.inputSeq, round: entry.round, kind: entry.kind, state: 'active', message: clone(entry.message), createdAt: new Date(this.now()) });
      return seq;
    });
    data.record.nextMessageSeq += seqs.length;
    if (valid.pending !== undefined) data.record.pending = clone(valid.pending);
    for (const fold of valid.compaction?.foldSeqs ?? []) data.messages.find((row) => row.seq === fold)!.state = 'compacted';
    for (const write of valid.toolCalls) this.#writeToolCall(data, step.sessionId, write);
    for (const row of valid.usageRounds) data.usage.set(`${row.inputSeq}:${row.round}`, { ...row, sessionId: step.sessionId, createdAt: new Date(this.now()) });
    for (const seq of valid.steer?.seqs ?? []) {
      const input = data.inputs[seq - 1]!;
      input.status = 'done';
      input.attempts += 1;
      input.startedAt ??= new Date(this.now());
      input.finishedAt = new Date(this.now());
    }
    if (valid.input !== undefined) this.#finish(data, valid.input as Port.InputTransition);
    this.commits += 1;
    return { messageSeqs: seqs };
  }

  async loadWindow(sessionId: string): Promise<StoredMessage[]> {
    return clone((this.#sessions.get(assertSessionId(sessionId))?.messages ?? []).filter((row) => row.state === 'active'));
  }

  async loadHistory(sessionId: string, options: Port.LoadHistoryOptions = {}): Promise<StoredMessage[]> {
    const rows = this.#sessions.get(assertSessionId(sessionId))?.messages ?? [];
    return clone(options.includeCompacted === true ? rows : rows.filter((row) => row.state === 'active'));
  }

  async getInput(sessionId: string, seq: number): Promise<InputRecord | null> {
    return clone(this.#sessions.get(assertSessionId(sessionId))?.inputs[seq - 1] ?? null);
  }

  async getInputById(sessionId: string, inputId: string): Promise<InputRecord | null> {
    return clone(this.#sessions.get(assertSessionId(sessionId))?.inputs.find((input) => input.inputId === inputId) ?? null);
  }

  async listInputs(sessionId: string, options: Port.ListInputsOptions = {}): Promise<InputRecord[]> {
    const statuses = options.status === undefined ? null : Array.isArray(options.status) ? options.status : [options.status];
    const rows = (this.#sessions.get(assertSessionId(sessionId))?.inputs ?? []).filter(
      (input) => (statuses === null || statuses.includes(input.status)) && input.seq > (options.afterSeq ?? 0),
    );
    return clone(rows.slice(0, Math.min(options.limit ?? 100, 1000)));
  }

  async loadOpenToolCalls(sessionId: string): Promise<ToolCallRecord[]> {
    const calls = [...(this.#sessions.get(assertSessionId(sessionId))?.toolCalls.values() ?? [])];
    return clone(calls.filter((call) => call.status === 'started' || call.status === 'in_doubt'));
  }

  async getUsageRounds(sessionId: string, inputSeq?: number): Promise<UsageRoundRecord[]> {
    const rows = [...(this.#sessions.get(assertSessionId(sessionId))?.usage.values() ?? [])];
    return clone(rows.filter((row) => inputSeq === undefined || row.inputSeq === inputSeq).sort((a, b) => a.inputSeq - b.inputSeq || a.round - b.round));
  }

  async requestCancel(sessionId: string): Promise<Date> {
    const record = this.#require(sessionId).record;
    record.cancelRequestedAt ??= new Date(this.now());
    return new Date(record.cancelRequestedAt);
  }

  async clearCancel(params: Port.FencedParams): Promise<void> {
    this.#fenced(params.sessionId, params.leaseToken).record.cancelRequestedAt = null;
  }

  #newSession(id: string): SessionData {
    const now = new Date(this.now());
    const record: SessionRecord = {
      id,
      agent: 'default',
      systemPrompt: null,
      metadata: {},
      config: {},
      status: 'idle',
      nextSeq: 0,
      nextMessageSeq: 0,
      lease: { owner: null, token: 0, expiresAt: null },
      pending: null,
      cancelRequestedAt: null,
      stats: { inputs: 0, rounds: 0, llmCalls: 0, toolCalls: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0, totalTokens: 0, firstInputAt: null, lastInputAt: null },
      createdAt: now,
      updatedAt: now,
    };
    const data: SessionData = { record, inputs: [], messages: [], toolCalls: new Map(), usage: new Map() };
    this.#sessions.set(id, data);
    return data;
  }

  #require(sessionId: string): SessionData {
    const data = this.#sessions.get(assertSessionId(sessionId));
    if (data === undefined) throw new SessionNotFoundError(`session ${sessionId} does not exist`);
    return data;
  }

  #fenced(sessionId: string, token: number): SessionData {
    const data = this.#require(sessionId);
    if (data.record.lease.token !== token) {
      throw new LeaseLostError(`lease token ${token} of session ${sessionId} is stale (current ${data.record.lease.token})`);
    }
    return data;
  }

  /** Every refusal is checked before anything is applied: a step is all or nothing. */
  #checkStep(data: SessionData, step: ReturnType<typeof validateStep>): void {
    for (const seq of step.compaction?.foldSeqs ?? []) {
      if (data.messages.find((row) => row.seq === seq)?.state !== 'active') throw new StateConflictError(`message ${seq} is not active`);
    }
    for (const seq of step.steer?.seqs ?? []) {
      if (data.inputs[seq - 1]?.status !== 'pending') throw new StateConflictError(`input ${seq} is not pending`);
    }
    if (step.steer !== undefined && data.inputs[step.steer.intoInputSeq - 1]?.status !== 'running') {
      throw new StateConflictError(`input ${step.steer.intoInputSeq} is not running`);
    }
    if (step.input !== undefined && data.inputs[step.input.seq - 1]?.status !== 'running') {
      throw new StateConflictError(`input ${step.input.seq} is not running`);
    }
  }

  #writeToolCall(data: SessionData, sessionId: string, write: Port.ToolCallWrite): void {
    const existing = data.toolCalls.get(write.toolCallId);
    const now = new Date(this.now());
    const ended = write.status !== 'started';
    data.toolCalls.set(write.toolCallId, {
      sessionId,
      toolCallId: write.toolCallId,
      inputSeq: write.inputSeq,
      round: write.round,
      name: write.name,
      args: clone(write.args),
      status: write.status,
      attempts: existing === undefined ? 1 : existing.attempts + (write.status === 'started' ? 1 : 0),
      idempotencyKey: `${sessionId}:${write.toolCallId}`,
      errorCode: write.errorCode ?? null,
      startedAt: existing === undefined || write.status === 'started' ? now : existing.startedAt,
      finishedAt: ended ? now : null,
      durationMs: write.durationMs ?? null,
    });
  }

  #finish(data: SessionData, transition: Port.InputTransition): void {
    const input = data.inputs[transition.seq - 1]!;
    input.status = transition.status;
    input.result = clone(transition.result ?? null);
    input.errorCode = transition.errorCode ?? null;
    input.errorMessage = transition.errorMessage ?? null;
    input.finishedAt = new Date(this.now());
    const record = data.record;
    record.status = transition.result?.status === 'waiting_for_input' ? 'waiting_for_input' : 'idle';
    const stats = record.stats;
    const result = transition.result;
    stats.inputs += 1;
    if (result !== undefined) {
      stats.rounds += result.rounds;
      stats.llmCalls += result.usage.llmCalls;
      stats.toolCalls += result.toolCalls;
      stats.promptTokens += result.usage.promptTokens;
      stats.completionTokens += result.usage.completionTokens;
      stats.cachedTokens += result.usage.cachedTokens;
      stats.reasoningTokens += result.usage.reasoningTokens;
      stats.totalTokens += result.usage.totalTokens;
    }
    stats.firstInputAt ??= new Date(this.now());
    stats.lastInputAt = new Date(this.now());
  }
}
