import type { StoredMessage } from '../messages.js';
import type { InputRecord, SessionRecord, ToolCallRecord, UsageRoundRecord } from '../session-types.js';
import type { LoopStore } from './loop-store.js';
import type { BudgetRecord, BudgetWrite, ListBudgetsOptions, ListTenantSettingsOptions, TenantSettingsPatch, TenantSettingsRecord, UsageQuery, UsageReportRows } from './tenant-admin.js';
import type { AcceptedInput, AcceptInputParams, CancelledTree, ChildSessionRecord, CreateSessionParams, DeletedSession, InputStatusCounts, ListSessionsOptions, LoadHistoryOptions, SessionPage } from './store-records.js';

/**
 * The store as the client library and the CLI use it: sessions created, read and deleted, inputs
 * accepted, listed, counted and cancelled, history and usage read. Every method may also throw
 * `session.invalid_id`.
 */
export interface ClientStore extends Pick<LoopStore, 'getSession' | 'listInputs'> {
  /** Throws `session.invalid_id`, `session.exists`, or `input.invalid` for bad fields. */
  createSession(params: CreateSessionParams): Promise<SessionRecord>;
  /**
   * A page of sessions, newest first (by creation, then id), filtered as asked. Throws
   * `input.invalid` for a bad filter, limit or cursor.
   */
  listSessions(options: ListSessionsOptions): Promise<SessionPage>;
  /**
   * Deletes the session and everything it owns. Answers the last lease token it had (0 if it was
   * never leased: `sessions.delete` fences the stream against writes under that token), or null when
   * there was no such session.
   */
  deleteSession(sessionId: string): Promise<DeletedSession | null>;

  /**
   * Makes an input durable: creates the session if needed and gives the input the next seq, in
   * acceptance order. Throws `input.invalid` / `input.too_large` before writing anything, and
   * `session.agent_mismatch` / `session.tenant_mismatch` (writing nothing) for another agent or
   * tenant than the session's.
   */
  acceptInput(params: AcceptInputParams): Promise<AcceptedInput>;

  getInput(sessionId: string, seq: number): Promise<InputRecord | null>;
  getInputById(sessionId: string, inputId: string): Promise<InputRecord | null>;
  /**
   * The session's inputs counted by status, in one aggregate read (no input rows are returned). All
   * zeros for a session that does not exist.
   */
  countInputs(sessionId: string): Promise<InputStatusCounts>;

  /** The active messages, in seq order: what the next LLM call is built from. */
  loadWindow(sessionId: string): Promise<StoredMessage[]>;
  /** Messages for inspection, in seq order; a page of them with `afterSeq` / `limit`. */
  loadHistory(sessionId: string, options?: LoadHistoryOptions): Promise<StoredMessage[]>;
  /** Ledger rows still `started` or `in_doubt`, in start order. */
  loadOpenToolCalls(sessionId: string): Promise<ToolCallRecord[]>;
  /** Usage rows, by input then round; only those of `inputSeq` when given. */
  getUsageRounds(sessionId: string, inputSeq?: number): Promise<UsageRoundRecord[]>;

  /** Sets the durable cancel flag (keeping an earlier request's time); returns that time. `session.not_found` if none. */
  requestCancel(sessionId: string): Promise<Date>;

  /**
   * {@link requestCancel} for the session, and for every session below it (its children, theirs …):
   * their `cascadeCancelledAt` and cancel flag are set, so what runs stops and what was accepted
   * ends `cancelled` when it runs. `session.not_found` if none.
   */
  requestCancelTree(sessionId: string): Promise<CancelledTree>;
  /** The session's children, in spawn order. Empty for a session with none (or no such session). */
  listChildren(sessionId: string): Promise<ChildSessionRecord[]>;

  /**
   * Creates a budget, or replaces the limit of the one with the same tenant, scope, agent, session,
   * unit and period (its use so far stays). Throws `input.invalid` for bad fields and
   * `session.not_found` for a session budget whose session does not exist or is another tenant's.
   */
  setBudget(write: BudgetWrite): Promise<BudgetRecord>;
  /** A budget with its current window's use, or null. */
  getBudget(id: number): Promise<BudgetRecord | null>;
  /** Budgets by id, filtered, each with its current window's use. `input.invalid` for a bad filter. */
  listBudgets(options?: ListBudgetsOptions): Promise<BudgetRecord[]>;
  /** Deletes a budget, its use and its reservations; false when there was none. */
  deleteBudget(id: number): Promise<boolean>;

  /**
   * Usage recorded in `[from, to)` (of a tenant, of an agent), grouped by UTC day, agent,
   * `provider:model` or session, in key order, with the totals over every group. `input.invalid` for
   * a bad query.
   */
  usageReport(query: UsageQuery): Promise<UsageReportRows>;

  /**
   * Sets a tenant's dispatch settings: the fields given change (null removes a cap), the others keep
   * their value (the default for a new row). `input.invalid` for a bad tenant or value.
   */
  setTenantSettings(tenant: string, patch: TenantSettingsPatch): Promise<TenantSettingsRecord>;
  /** A tenant's stored settings, or null (it runs with the defaults). */
  getTenantSettings(tenant: string): Promise<TenantSettingsRecord | null>;
  /** Stored settings by tenant name, a page after `after`. */
  listTenantSettings(options?: ListTenantSettingsOptions): Promise<TenantSettingsRecord[]>;
  /** Removes a tenant's settings; false when it had none. */
  deleteTenantSettings(tenant: string): Promise<boolean>;
}
