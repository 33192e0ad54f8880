import { LeaseLostError, SessionExistsError, SessionNotFoundError, StateConflictError } from '../../../src/core/errors/index.js';
import type { TraceContext } from '../../../src/core/ports/tracing.js';
import type { ChildResultPayload } from '../../../src/core/ports/children.js';
import type { StoredMessage } from '../../../src/core/messages.js';
import type * as Port from '../../../src/core/ports/session-store.js';
import { assertSessionId } from '../../../src/fleet/session-id.js';
import { INPUT_STATUSES, type InputRecord, type SessionRecord, type ToolCallRecord, type UsageRoundRecord } from '../../../src/core/session-types.js';
import { validateAcceptInput } from '../../../src/store/inbox/accept-input-validation.js';
import { agentMismatch, agentNotFound, queueMismatch, tenantMismatch } from '../../../src/store/agents/agent-refusals.js';
import { optionalQueueName } from '../../../src/fleet/queue-name.js';
import { InMemoryAgentRegistry } from './in-memory-agent-registry.js';
import { listSessionRecords } from './in-memory-session-list.js';
import { InMemoryBudgetAdmin } from './in-memory-budget-admin.js';
import type { BudgetRecord, BudgetWrite, ListBudgetsOptions, ListTenantSettingsOptions, TenantSettingsPatch, TenantSettingsRecord, UsageQuery, UsageReportRows } from '../../../src/core/ports/tenant-admin.js';
import { InMemoryTenantSettings } from './in-memory-tenant-settings.js';
import { usageReportOf } from './in-memory-usage-report.js';
import { assertFlag, assertLeaseToken, assertSeq, assertText, assertTtlMs } from '../../../src/store/postgres/arguments.js';
import { validateStep } from '../../../src/store/steps/commit-step-validation.js';
import { assertAwaiting, CHILD_INPUT_ID_PREFIX, SPAWN_INPUT_ID, validateChildPayload, validateSpawn } from '../../../src/store/children/child-validation.js';
import { resolveHistoryOptions } from '../../../src/store/history/history-options.js';
import {
  assertInputId,
  childStatus,
  claimableInput,
  compareText,
  deliverSteered,
  emptySessionRecord,
  finishInput,
  inputFilter,
  serialiseStep,
  storedMessage,
  upsertToolCall,
  validateCreateSession,
} from './in-memory-store-rows.js';

interface LedgerEntry {
  record: ToolCallRecord;
  /** Commit that last started the call: "start order" even when the clock stands still. */
  startedInCommit: number;
}

interface SessionData {
  record: SessionRecord;
  inputs: InputRecord[];
  messages: StoredMessage[];
  toolCalls: Map<string, LedgerEntry>;
  usage: Map<string, UsageRoundRecord>;
  /** `sessions.finishes_owed`: set by every commit that ends an input, cleared by a release that says all were published. */
  finishesOwed: boolean;
  /** `sessions.queue`: the queue it runs on; `''` until its first add on a queue records one. */
  queue: string;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * The `SessionStore` port in memory, for unit tests of the loop. It keeps the contract of the
 * Postgres store — argument checks, fencing, gapless seqs, idempotent accepts, all-or-nothing steps,
 * values read back as `jsonb` returns them — and the shared contract suite (test/contract) runs
 * against both so it cannot drift. Every operation runs synchronously after its first line, so
 * concurrent calls never interleave, like transactions serialised on the session row.
 */
export class InMemorySessionStore implements Port.SessionStore {
  readonly #sessions = new Map<string, SessionData>();
  /**
   * The last fencing token handed out, by any session: one counter for the whole store, like the
   * database-wide `lease_token_seq`, so a token is never reused — not even by a session id deleted and
   * created again (I3).
   */
  #lastLeaseToken = 0;
  /** Commits applied so far; tests use it to crash after a given step. */
  commits = 0;

  /** The agents accepts and creates are checked against (workers register there). */
  readonly agents: InMemoryAgentRegistry;

  /** The budgets the admin methods set (`budgets.recordUse` stands in for enforcement). */
  readonly budgets: InMemoryBudgetAdmin;

  /** @param now Milliseconds since the epoch: the "database clock" of leases and timestamps. */
  constructor(private readonly now: () => number = () => Date.now()) {
    this.agents = new InMemoryAgentRegistry(now);
    this.budgets = new InMemoryBudgetAdmin(now, (id) => this.#sessions.get(id)?.record);
    this.tenantSettings = new InMemoryTenantSettings(now);
  }

  /** The `tenant_settings` rows the admin methods set. */
  readonly tenantSettings: InMemoryTenantSettings;

  async setTenantSettings(tenant: string, patch: TenantSettingsPatch): Promise<TenantSettingsRecord> {
    return this.tenantSettings.set(tenant, patch);
  }

  async getTenantSettings(tenant: string): Promise<TenantSettingsRecord | null> {
    return this.tenantSettings.get(tenant);
  }

  async listTenantSettings(options?: ListTenantSettingsOptions): Promise<TenantSettingsRecord[]> {
    return this.tenantSettings.list(options);
  }

  async deleteTenantSettings(tenant: string): Promise<boolean> {
    return this.tenantSettings.delete(tenant);
  }

  async setBudget(write: BudgetWrite): Promise<BudgetRecord> {
    return this.budgets.set(write);
  }

  async getBudget(id: number): Promise<BudgetRecord | null> {
    return this.budgets.get(id);
  }

  async listBudgets(options?: ListBudgetsOptions): Promise<BudgetRecord[]> {
    return this.budgets.list(options);
  }

  async deleteBudget(id: number): Promise<boolean> {
    return this.budgets.delete(id);
  }

  async usageReport(query: UsageQuery): Promise<UsageReportRows> {
    const rounds = [...this.#sessions.values()].flatMap((data) => [...data.usage.values()].map((row) => ({ row, tenant: data.record.tenant, agent: data.record.agent })));
    return usageReportOf(rounds, query);
  }

  async createSession(params: Port.CreateSessionParams): Promise<SessionRecord> {
    const profile = validateCreateSession(params);
    const queue = optionalQueueName(params.queue) ?? '';
    if (!this.agents.served(profile.agent)) throw agentNotFound(profile.id, profile.agent);
    if (this.#sessions.has(profile.id)) throw new SessionExistsError(`session ${profile.id} already exists`);
    const data = this.#newSession(profile.id);
    Object.assign(data.record, profile);
    data.queue = queue;
    return clone(data.record);
  }

  async listSessions(options: Port.ListSessionsOptions): Promise<Port.SessionPage> {
    return listSessionRecords([...this.#sessions.values()].map((data) => data.record), options);
  }

  /** A session's record as it is now, synchronously (the in-memory budgets read sessions through it). */
  sessionNow(sessionId: string): SessionRecord | null {
    return this.#sessions.get(sessionId)?.record ?? null;
  }

  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const data = this.#sessions.get(assertSessionId(sessionId));
    return data === undefined ? null : clone(data.record);
  }

  async deleteSession(sessionId: string): Promise<Port.DeletedSession | null> {
    const id = assertSessionId(sessionId);
    const data = this.#sessions.get(id);
    if (data === undefined) return null;
    // The foreign keys cascade: the whole tree goes with it.
    const descendants = this.#descendants(id).map((child) => ({ sessionId: child.record.id, leaseToken: child.record.lease.token }));
    this.#sessions.delete(id);
    for (const child of descendants) this.#sessions.delete(child.sessionId);
    this.budgets.dropSessions([id, ...descendants.map((child) => child.sessionId)]);
    return { leaseToken: data.record.lease.token, descendants };
  }

  async acceptInput(params: Port.AcceptInputParams): Promise<Port.AcceptedInput> {
    const valid = validateAcceptInput(params);
    // As the statement: another queue is refused first, then an unserved agent, then another tenant,
    // then another agent than the session's.
    const known = this.#sessions.get(valid.sessionId);
    if (valid.queue !== null && known !== undefined && known.queue !== '' && known.queue !== valid.queue) {
      throw queueMismatch(valid.sessionId, valid.queue, known.queue);
    }
    if (valid.agent !== null && !this.agents.served(valid.agent)) throw agentNotFound(valid.sessionId, valid.agent);
    const current = known?.record;
    if (valid.tenant !== null && current !== undefined && current.tenant !== valid.tenant) throw tenantMismatch(valid.sessionId, valid.tenant);
    if (valid.agent !== null && current !== undefined && current.agent !== valid.agent) throw agentMismatch(valid.sessionId, valid.agent, current.agent);
    const data = this.#sessions.get(valid.sessionId) ?? this.#newSession(valid.sessionId, valid.agent ?? undefined, valid.tenant ?? undefined);
    if (data.queue === '' && valid.queue !== null) data.queue = valid.queue;
    const existing = data.inputs.find((input) => input.inputId === valid.inputId);
    if (existing !== undefined) return { sessionId: valid.sessionId, seq: existing.seq, inputId: existing.inputId, duplicate: true, tenant: data.record.tenant };
    const at = this.#at();
    const seq = data.record.nextSeq + 1;
    data.record.nextSeq = seq;
    data.record.updatedAt = at;
    const payload = JSON.parse(valid.payloadText) as Record<string, unknown>;
    data.inputs.push(Object.assign(newInput(valid.sessionId, seq, valid.inputId, payload, at, valid), { originJobId: valid.originJobId, traceContext: valid.traceContextText === null ? null : (JSON.parse(valid.traceContextText) as TraceContext) }));
    return { sessionId: valid.sessionId, seq, inputId: valid.inputId, duplicate: false, tenant: data.record.tenant };
  }

  async acquireLease(params: Port.AcquireLeaseParams): Promise<Port.LeaseAcquisition> {
    const sessionId = assertSessionId(params.sessionId);
    const owner = assertText(params.owner, 'owner', 200);
    const ttlMs = assertTtlMs(params.ttlMs);
    const data = this.#sessions.get(sessionId);
    if (data === undefined) throw new SessionNotFoundError(`session ${sessionId} does not exist`);
    const lease = data.record.lease;
    const now = this.now();
    if (lease.expiresAt !== null && lease.expiresAt.getTime() > now) {
      return { acquired: false, holder: lease.owner, retryAfterMs: Math.ceil(lease.expiresAt.getTime() - now) };
    }
    this.#lastLeaseToken += 1;
    lease.token = this.#lastLeaseToken;
    lease.owner = owner;
    lease.expiresAt = new Date(now + ttlMs);
    data.record.updatedAt = new Date(now);
    return { acquired: true, token: lease.token, expiresAt: new Date(lease.expiresAt) };
  }

  async renewLease(params: Port.RenewLeaseParams): Promise<Date> {
    const sessionId = assertSessionId(params.sessionId);
    const token = assertLeaseToken(params.token);
    const ttlMs = assertTtlMs(params.ttlMs);
    const lease = this.#sessions.get(sessionId)?.record.lease;
    // A released lease is not revived: a late heartbeat must not take back a session given up.
    if (lease === undefined || lease.token !== token || lease.expiresAt === null) {
      throw new LeaseLostError(`lease ${token} of session ${sessionId} is no longer held`);
    }
    lease.expiresAt = new Date(this.now() + ttlMs);
    return new Date(lease.expiresAt);
  }

  async releaseLease(params: Port.ReleaseLeaseParams): Promise<boolean> {
    const sessionId = assertSessionId(params.sessionId);
    const token = assertLeaseToken(params.token);
    const published = assertFlag(params.finishesPublished, 'finishesPublished');
    const data = this.#sessions.get(sessionId);
    const record = data?.record;
    if (data === undefined || record === undefined || record.lease.token !== token || record.lease.expiresAt === null) return false;
    if (published) data.finishesOwed = false;
    record.lease.owner = null;
    record.lease.expiresAt = null;
    record.updatedAt = this.#at();
    return true;
  }

  async claimNextInput(params: Port.FencedParams): Promise<Port.ClaimedInput | null> {
    const data = this.#fenced(params, 'claimNextInput');
    // A waiting input not ready holds its place: nothing is claimed, as from an empty inbox.
    const input = claimableInput(data.record, data.inputs);
    if (input === undefined) return null;
    const at = this.#at();
    const resumed = input.status === 'running';
    const woken = input.status === 'waiting';
    input.status = 'running';
    // Waking a parked input starts its attempts again: the park was progress.
    input.attempts = woken ? 1 : input.attempts + 1;
    input.awaiting = null;
    input.startedAt ??= at;
    data.record.status = 'running';
    data.record.updatedAt = at;
    return { input: clone(input), resumed, woken, session: clone(data.record), ...pendingFlags(data.inputs) };
  }

  async acquireLeaseAndClaim(params: Port.AcquireLeaseParams): Promise<Port.LeaseAndClaim> {
    // As the statement: another queue's session is refused, one with none yet takes the drain's.
    const queue = optionalQueueName(params.queue);
    const onQueue = this.#sessions.get(assertSessionId(params.sessionId));
    if (queue !== null && onQueue !== undefined && onQueue.queue !== '' && onQueue.queue !== queue) throw queueMismatch(params.sessionId, queue, onQueue.queue);
    const lease = await this.acquireLease(params);
    if (lease.acquired && queue !== null && onQueue !== undefined && onQueue.queue === '') onQueue.queue = queue;
    if (!lease.acquired) return lease;
    const data = this.#sessions.get(assertSessionId(params.sessionId))!;
    // As the statement: a session that never ended an input owes nothing, and while one may be owed
    // nothing is claimed (the drain claims after its repair), an open input left to the caller.
    const finishesOwed = data.finishesOwed && data.record.stats.inputs > 0;
    if (finishesOwed) {
      const open = claimableInput(data.record, data.inputs) !== undefined;
      return { ...lease, claimed: open ? undefined : null, finishesOwed };
    }
    const claimed = await this.claimNextInput({ sessionId: params.sessionId, leaseToken: lease.token });
    return { ...lease, claimed, finishesOwed };
  }

  async commitStep(step: Port.StepCommit): Promise<Port.StepCommitResult> {
    const fence = { sessionId: assertSessionId(step.sessionId), leaseToken: assertLeaseToken(step.leaseToken) };
    const valid = validateStep(step);
    const json = serialiseStep(valid);
    const data = this.#fenced(fence, 'commitStep');
    const at = this.#at();
    const rows = valid.messages.map((entry, index) => storedMessage(fence.sessionId, data.record.nextMessageSeq + index + 1, entry, at));
    const seqs = rows.map((row) => row.seq);
    this.#checkStep(data, valid, seqs);
    this.commits += 1;
    data.messages.push(...rows);
    data.record.nextMessageSeq += seqs.length;
    data.record.updatedAt = at;
    if (json.pending !== undefined) data.record.pending = json.pending;
    const folds = new Set(valid.compaction?.foldSeqs ?? []);
    if (folds.size > 0) for (const row of data.messages) if (folds.has(row.seq)) row.state = 'compacted';
    for (const write of json.toolCalls) {
      const previous = data.toolCalls.get(write.toolCallId);
      const startedInCommit = write.status === 'started' || previous === undefined ? this.commits : previous.startedInCommit;
      data.toolCalls.set(write.toolCallId, { record: upsertToolCall(fence.sessionId, previous?.record, write, at), startedInCommit });
    }
    for (const row of json.usageRounds) data.usage.set(`${row.inputSeq}:${row.round}`, { ...row, costPicoUsd: row.costPicoUsd ?? null, sessionId: fence.sessionId, createdAt: at });
    if (valid.steer !== undefined) for (const seq of valid.steer.seqs) deliverSteered(data.inputs[seq - 1]!, valid.steer.intoInputSeq, at);
    if (valid.input !== undefined) {
      finishInput(data.record, data.inputs, valid.input, json.result, at);
      data.finishesOwed = true;
    }
    return { messageSeqs: seqs, ...pendingFlags(data.inputs) };
  }

  async loadWindow(sessionId: string): Promise<StoredMessage[]> {
    return this.loadHistory(sessionId);
  }

  async loadHistory(sessionId: string, options?: Port.LoadHistoryOptions): Promise<StoredMessage[]> {
    const rows = this.#sessions.get(assertSessionId(sessionId))?.messages ?? [];
    const page = resolveHistoryOptions(options);
    const wanted = rows.filter((row) => (page.includeCompacted || row.state === 'active') && row.seq > page.afterSeq);
    return clone(page.limit === null ? wanted : wanted.slice(0, page.limit));
  }

  async getInput(sessionId: string, seq: number): Promise<InputRecord | null> {
    const data = this.#sessions.get(assertSessionId(sessionId));
    const wanted = assertSeq(seq);
    return clone(data?.inputs[wanted - 1] ?? null);
  }

  async getInputById(sessionId: string, inputId: string): Promise<InputRecord | null> {
    const data = this.#sessions.get(assertSessionId(sessionId));
    const wanted = assertInputId(inputId);
    return clone(data?.inputs.find((input) => input.inputId === wanted) ?? null);
  }

  async listInputs(sessionId: string, options: Port.ListInputsOptions = {}): Promise<InputRecord[]> {
    const data = this.#sessions.get(assertSessionId(sessionId));
    const { statuses, afterSeq, limit } = inputFilter(options);
    const affectsRun = options.affectsRun === true;
    const changesRun = (input: InputRecord) => input.mode === 'steer' || input.mode === 'interrupt' || input.kind === 'timer';
    const rows = (data?.inputs ?? []).filter((input) => (statuses === null || statuses.includes(input.status)) && input.seq > afterSeq && (!affectsRun || changesRun(input)));
    return clone(rows.slice(0, limit));
  }

  async countInputs(sessionId: string): Promise<Port.InputStatusCounts> {
    const counts = Object.fromEntries(INPUT_STATUSES.map((status) => [status, 0])) as Port.InputStatusCounts;
    for (const input of this.#sessions.get(assertSessionId(sessionId))?.inputs ?? []) counts[input.status] += 1;
    return counts;
  }

  async loadOpenToolCalls(sessionId: string): Promise<ToolCallRecord[]> {
    const entries = [...(this.#sessions.get(assertSessionId(sessionId))?.toolCalls.values() ?? [])];
    const open = entries.filter((entry) => entry.record.status === 'started' || entry.record.status === 'in_doubt');
    // Start order; calls started in the same step share a start time (one transaction) and go by id.
    open.sort((a, b) => a.startedInCommit - b.startedInCommit || compareText(a.record.toolCallId, b.record.toolCallId));
    return clone(open.map((entry) => entry.record));
  }

  async getUsageRounds(sessionId: string, inputSeq?: number): Promise<UsageRoundRecord[]> {
    const data = this.#sessions.get(assertSessionId(sessionId));
    const only = inputSeq === undefined ? undefined : assertSeq(inputSeq, 'inputSeq');
    const rows = [...(data?.usage.values() ?? [])].filter((row) => only === undefined || row.inputSeq === only);
    return clone(rows.sort((a, b) => a.inputSeq - b.inputSeq || a.round - b.round));
  }

  async loadRunState(sessionId: string, inputSeq: number): Promise<Port.RunState> {
    const [window, usageRounds, openToolCalls] = await Promise.all([
      this.loadWindow(sessionId),
      this.getUsageRounds(sessionId, assertSeq(inputSeq, 'inputSeq')),
      this.loadOpenToolCalls(sessionId),
    ]);
    return { window, usageRounds, openToolCalls };
  }

  async requestCancel(sessionId: string): Promise<Date> {
    const id = assertSessionId(sessionId);
    const record = this.#sessions.get(id)?.record;
    if (record === undefined) throw new SessionNotFoundError(`session ${id} does not exist`);
    const at = this.#at();
    record.cancelRequestedAt ??= at;
    record.updatedAt = at;
    return new Date(record.cancelRequestedAt);
  }

  async clearCancel(params: Port.FencedParams): Promise<void> {
    const record = this.#fenced(params, 'clearCancel').record;
    record.cancelRequestedAt = null;
    record.updatedAt = this.#at();
  }

  async readCancelRequest(sessionId: string): Promise<Date | null> {
    const requested = this.#sessions.get(assertSessionId(sessionId))?.record.cancelRequestedAt ?? null;
    return requested === null ? null : new Date(requested);
  }

  async parkInput(params: Port.ParkInputParams): Promise<void> {
    const fence = { sessionId: assertSessionId(params.sessionId), leaseToken: assertLeaseToken(params.leaseToken) };
    const inputSeq = assertSeq(params.inputSeq, 'inputSeq');
    const awaiting = assertAwaiting(params.awaiting);
    const data = this.#fenced(fence, 'parkInput');
    const input = data.inputs[inputSeq - 1];
    if (input?.status !== 'running') {
      throw new StateConflictError(`input ${inputSeq} of session ${fence.sessionId} is ${input?.status ?? 'missing'}, not running: it cannot wait for children`);
    }
    input.status = 'waiting';
    input.awaiting = awaiting;
    data.record.status = 'waiting_for_children';
    data.record.updatedAt = this.#at();
  }

  async spawnChild(params: Port.SpawnChildParams): Promise<Port.SpawnChildResult> {
    const spawn = validateSpawn(params);
    const parent = this.#fenced({ sessionId: spawn.parentSessionId, leaseToken: spawn.leaseToken }, 'spawnChild');
    if (this.#sessions.has(spawn.childSessionId)) return { kind: 'existing', childSessionId: spawn.childSessionId };
    const siblings = [...this.#sessions.values()].filter(
      (other) => other.record.parentSessionId === spawn.parentSessionId && other.record.spawn?.inputSeq === spawn.inputSeq,
    ).length;
    if (siblings >= spawn.maxChildrenPerInput) return { kind: 'refused', reason: 'too_many_children', limit: spawn.maxChildrenPerInput };
    const child = this.#newSession(spawn.childSessionId, spawn.agent, parent.record.tenant);
    child.queue = parent.queue;
    const at = child.record.createdAt;
    Object.assign(child.record, {
      parentSessionId: spawn.parentSessionId,
      rootSessionId: spawn.rootSessionId,
      depth: spawn.depth,
      spawn: { inputSeq: spawn.inputSeq, toolCallId: spawn.toolCallId, wait: spawn.wait },
      nextSeq: 1,
    });
    child.inputs.push(
      newInput(spawn.childSessionId, 1, SPAWN_INPUT_ID, JSON.parse(spawn.payloadText) as Record<string, unknown>, at, { kind: 'send', mode: 'queue' }),
    );
    return { kind: 'created', childSessionId: spawn.childSessionId };
  }

  async deliverChildResult(childSessionId: string, payload: ChildResultPayload): Promise<Port.ChildDelivery | null> {
    const id = assertSessionId(childSessionId);
    const { wait, payloadText } = validateChildPayload(payload);
    const child = this.#sessions.get(id)?.record;
    if (child?.parentSessionId == null || child.spawn === null) return null;
    // As DELIVER_CHILD_RESULT_SQL: a child whose tree was cancelled from above delivers nothing.
    if (child.cascadeCancelledAt !== null) return null;
    const parent = this.#sessions.get(child.parentSessionId);
    if (parent === undefined) return null;
    const inputId = `${CHILD_INPUT_ID_PREFIX}${child.spawn.toolCallId}`;
    if (parent.inputs.some((input) => input.inputId === inputId)) return null;
    const host = parent.inputs[child.spawn.inputSeq - 1];
    if (wait && host?.status !== 'running' && host?.status !== 'waiting') return null;
    const at = this.#at();
    const seq = parent.record.nextSeq + 1;
    const row = newInput(parent.record.id, seq, inputId, JSON.parse(payloadText) as Record<string, unknown>, at, { kind: 'child', mode: wait ? 'queue' : 'steer' });
    if (wait) Object.assign(row, { status: 'done', steeredInto: child.spawn.inputSeq, startedAt: at, finishedAt: at });
    parent.inputs.push(row);
    parent.record.nextSeq = seq;
    parent.record.updatedAt = at;
    return { parentSessionId: parent.record.id, seq };
  }

  async requestCancelTree(sessionId: string): Promise<Port.CancelledTree> {
    const requestedAt = await this.requestCancel(sessionId);
    const at = this.#at();
    const descendants = this.#descendants(assertSessionId(sessionId));
    for (const { record } of descendants) {
      record.cancelRequestedAt ??= at;
      record.cascadeCancelledAt ??= at;
      record.updatedAt = at;
    }
    const tenant = this.#sessions.get(assertSessionId(sessionId))?.record.tenant ?? 'default';
    return { requestedAt, descendants: descendants.map((child) => child.record.id), tenant };
  }

  async listChildren(sessionId: string): Promise<Port.ChildSessionRecord[]> {
    const id = assertSessionId(sessionId);
    const parent = this.#sessions.get(id);
    // Spawn order: creation time, then the order they were created in (the database's clock never ties in practice).
    const children = [...this.#sessions.values()].filter((data) => data.record.parentSessionId === id && data.record.spawn !== null);
    children.sort((a, b) => a.record.createdAt.getTime() - b.record.createdAt.getTime());
    return children.map(({ record, inputs }) => {
      const spawn = record.spawn!;
      const delivered = parent?.inputs.find((input) => input.inputId === `${CHILD_INPUT_ID_PREFIX}${spawn.toolCallId}`);
      return {
        sessionId: record.id,
        agent: record.agent,
        inputSeq: spawn.inputSeq,
        toolCallId: spawn.toolCallId,
        wait: spawn.wait,
        depth: record.depth,
        status: childStatus(record, inputs, delivered),
        createdAt: new Date(record.createdAt),
      };
    });
  }

  /** The sessions below `sessionId` (children, theirs …), by id as the database orders them. */
  #descendants(sessionId: string): SessionData[] {
    const found = new Map<string, SessionData>();
    let frontier = [sessionId];
    while (frontier.length > 0) {
      const parents = new Set(frontier);
      frontier = [];
      for (const data of this.#sessions.values()) {
        const parent = data.record.parentSessionId;
        if (parent !== null && parents.has(parent) && data.record.id !== sessionId && !found.has(data.record.id)) {
          found.set(data.record.id, data);
          frontier.push(data.record.id);
        }
      }
    }
    return [...found.values()].sort((a, b) => compareText(a.record.id, b.record.id));
  }

  #at(): Date {
    return new Date(this.now());
  }

  #newSession(id: string, agent?: string, tenant?: string): SessionData {
    const record = emptySessionRecord(id, this.#at());
    if (agent !== undefined) record.agent = agent;
    if (tenant !== undefined) record.tenant = tenant;
    const data: SessionData = { record, inputs: [], messages: [], toolCalls: new Map(), usage: new Map(), finishesOwed: true, queue: '' };
    this.#sessions.set(id, data);
    return data;
  }

  /**
   * The fence: the session exists and the token is its current one. A missing session is
   * `lease.lost` too (as in Postgres, where the fenced statement simply matches no row): a holder
   * whose session was deleted under it has lost it.
   */
  #fenced(params: Port.FencedParams, operation: string): SessionData {
    const sessionId = assertSessionId(params.sessionId);
    const token = assertLeaseToken(params.leaseToken);
    const data = this.#sessions.get(sessionId);
    if (data === undefined || data.record.lease.token !== token) {
      throw new LeaseLostError(`${operation} refused: lease token ${token} of session ${sessionId} is no longer current`);
    }
    return data;
  }

  /**
   * Every refusal is checked before anything is applied: a step is all or nothing. The step's own
   * messages count as active for its fold, since Postgres appends them before folding.
   */
  #checkStep(data: SessionData, step: ReturnType<typeof validateStep>, newSeqs: number[]): void {
    for (const seq of step.compaction?.foldSeqs ?? []) {
      // Message seqs are gapless from 1, so a message's seq is its place in the array.
      const active = newSeqs.includes(seq) || data.messages[seq - 1]?.state === 'active';
      if (!active) throw new StateConflictError(`message ${seq} is not active`);
    }
    if (step.steer !== undefined) {
      const { seqs, intoInputSeq } = step.steer;
      if (data.inputs[intoInputSeq - 1]?.status !== 'running' || seqs.some((seq) => data.inputs[seq - 1]?.status !== 'pending')) {
        throw new StateConflictError(`steering into input ${intoInputSeq} needs it running and inputs ${seqs.join(', ')} pending`);
      }
    }
    if (step.input !== undefined && data.inputs[step.input.seq - 1]?.status !== 'running') {
      throw new StateConflictError(`input ${step.input.seq} is not running`);
    }
  }
}

/** A new `pending` inbox row, as an accept (or a spawn's first input, or a child result) inserts it. */
function newInput(
  sessionId: string,
  seq: number,
  inputId: string,
  payload: Record<string, unknown>,
  at: Date,
  how: Pick<InputRecord, 'kind' | 'mode'>,
): InputRecord {
  return {
    sessionId,
    seq,
    inputId,
    kind: how.kind,
    mode: how.mode,
    payload,
    status: 'pending',
    attempts: 0,
    steeredInto: null,
    result: null,
    awaiting: null,
    errorCode: null,
    errorMessage: null,
    originJobId: null,
    traceContext: null,
    acceptedAt: at,
    startedAt: null,
    finishedAt: null,
  };
}

/** `pendingInputs` and `pendingSteers` of the port: any input pending, and one that would change a run. */
function pendingFlags(inputs: readonly InputRecord[]): { pendingInputs: boolean; pendingSteers: boolean } {
  const pending = inputs.filter((input) => input.status === 'pending');
  return {
    pendingInputs: pending.length > 0,
    pendingSteers: pending.some((input) => input.mode === 'steer' || input.mode === 'interrupt' || input.kind === 'timer'),
  };
}
