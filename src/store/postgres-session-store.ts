import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import type { StoredMessage } from '../core/messages.js';
import type {
  AcceptedInput,
  AcceptInputParams,
  DeletedSession,
  AcquireLeaseParams,
  CancelledTree,
  ChildDelivery,
  ChildSessionRecord,
  ClaimedInput,
  CreateSessionParams,
  FencedParams,
  InputStatusCounts,
  LeaseAcquisition,
  LeaseAndClaim,
  ListInputsOptions,
  ListSessionsOptions,
  LoadHistoryOptions,
  ParkInputParams,
  ReleaseLeaseParams,
  RenewLeaseParams,
  RunState,
  SessionPage,
  SessionStore,
  SpawnChildParams,
  SpawnChildResult,
  StepCommit,
  StepCommitResult,
} from '../core/ports/session-store.js';
import type { ChildResultPayload } from '../core/ports/children.js';
import type { InputRecord, SessionRecord, ToolCallRecord, UsageRoundRecord } from '../core/session-types.js';
import { acceptInput } from './inbox/accept-input.js';
import { acquireLease, acquireLeaseAndClaim } from './lease/acquire-lease.js';
import { claimNextInput } from './inbox/claim-next-input.js';
import { clearCancel } from './inbox/clear-cancel.js';
import { commitStep } from './steps/commit-step.js';
import { countInputs } from './inbox/count-inputs.js';
import { createSession } from './sessions/create-session.js';
import { deleteSession } from './sessions/delete-session.js';
import { listSessions } from './sessions/list-sessions.js';
import { getInputById } from './inbox/get-input-by-id.js';
import { getInput } from './inbox/get-input.js';
import { getSession } from './sessions/get-session.js';
import { loadRunState } from './steps/load-run-state.js';
import { getUsageRounds } from './sessions/get-usage-rounds.js';
import { listInputs } from './inbox/list-inputs.js';
import { loadHistory } from './history/load-history.js';
import { loadOpenToolCalls } from './steps/load-open-tool-calls.js';
import { loadWindow } from './steps/load-window.js';
import { releaseLease } from './lease/release-lease.js';
import { renewLease } from './lease/renew-lease.js';
import { requestCancel } from './inbox/request-cancel.js';
import { readCancelRequest } from './inbox/read-cancel-request.js';
import { ReadBatcher } from './batching/read-batcher.js';
import type { BatchOptions } from './batching/batch-queue.js';
import { RowBatcher } from './batching/row-batcher.js';
import { WindowCache, type WindowCacheOptions } from './steps/window-cache.js';
import { parkInput } from './inbox/park-input.js';
import { requestCancelTree } from './inbox/request-cancel-tree.js';
import { deliverChildResult } from './children/deliver-child-result.js';
import { listChildren } from './children/list-children.js';
import { KeyedSerial, spawnChild } from './children/spawn-child.js';
import type { BudgetRecord, BudgetWrite, ListBudgetsOptions, ListTenantSettingsOptions, TenantSettingsPatch, TenantSettingsRecord, UsageQuery, UsageReportRows } from '../core/ports/tenant-admin.js';
import { deleteTenantSettings, getTenantSettings, listTenantSettings, setTenantSettings } from './tenants/tenant-settings-admin.js';
import { usageReport } from './usage/usage-report.js';
import { deleteBudget, getBudget, listBudgets, setBudget } from './budgets/budget-admin.js';

/** Options of {@link PostgresSessionStore}. */
export interface PostgresSessionStoreOptions {
  /**
   * How writes of different sessions — accepts, leases and first claims, loop steps, lease releases —
   * share a statement (group commit); the hot reads share round trips within the same limits.
   */
  batch?: BatchOptions;
  /** The worker-side cache of long active windows (docs/store.md, "The window cache"). */
  windowCache?: WindowCacheOptions;
}

/**
 * The system of record (docs/store.md) behind the {@link SessionStore} port. Each operation lives in
 * its own module; this class only binds them to a pool, and the hot writes — accepts, leases and
 * claims, steps, releases — to the batcher that lets writes of different sessions share a
 * statement. The pool belongs to the caller (create it
 * with `createPgPool`), who also ends it.
 */
export class PostgresSessionStore implements SessionStore {
  private readonly db: NodePgDatabase;
  private readonly writes: RowBatcher;
  private readonly reads: ReadBatcher;
  private readonly windows: WindowCache;
  /** Spawns of one parent, one after another (see `spawnChild`). */
  private readonly spawns = new KeyedSerial();

  constructor(
    private readonly pool: pg.Pool,
    options: PostgresSessionStoreOptions = {},
  ) {
    this.db = drizzle({ client: pool });
    this.writes = new RowBatcher(pool, options.batch);
    // Reads take no locks and write nothing: they batch by the same limits, in their own round trips.
    this.reads = new ReadBatcher(pool, options.batch);
    this.windows = new WindowCache(options.windowCache);
  }

  createSession(params: CreateSessionParams): Promise<SessionRecord> {
    return createSession(this.pool, params);
  }

  getSession(sessionId: string): Promise<SessionRecord | null> {
    return getSession(this.pool, sessionId);
  }

  listSessions(options: ListSessionsOptions): Promise<SessionPage> {
    return listSessions(this.pool, options);
  }

  deleteSession(sessionId: string): Promise<DeletedSession | null> {
    return deleteSession(this.pool, sessionId);
  }

  acceptInput(params: AcceptInputParams): Promise<AcceptedInput> {
    return acceptInput(this.pool, this.writes, params);
  }

  acquireLease(params: AcquireLeaseParams): Promise<LeaseAcquisition> {
    return acquireLease(this.pool, params);
  }

  acquireLeaseAndClaim(params: AcquireLeaseParams): Promise<LeaseAndClaim> {
    return acquireLeaseAndClaim(this.pool, this.writes, params);
  }

  renewLease(params: RenewLeaseParams): Promise<Date> {
    return renewLease(this.pool, params);
  }

  releaseLease(params: ReleaseLeaseParams): Promise<boolean> {
    return releaseLease(this.writes, params);
  }

  claimNextInput(params: FencedParams): Promise<ClaimedInput | null> {
    return claimNextInput(this.writes, params);
  }

  commitStep(step: StepCommit): Promise<StepCommitResult> {
    return commitStep(this.pool, this.writes, step);
  }

  loadWindow(sessionId: string): Promise<StoredMessage[]> {
    return loadWindow(this.pool, sessionId);
  }

  loadHistory(sessionId: string, options?: LoadHistoryOptions): Promise<StoredMessage[]> {
    return loadHistory(this.pool, sessionId, options);
  }

  getInput(sessionId: string, seq: number): Promise<InputRecord | null> {
    return getInput(this.pool, sessionId, seq);
  }

  getInputById(sessionId: string, inputId: string): Promise<InputRecord | null> {
    return getInputById(this.pool, sessionId, inputId);
  }

  listInputs(sessionId: string, options?: ListInputsOptions): Promise<InputRecord[]> {
    return listInputs(this.reads, sessionId, options);
  }

  countInputs(sessionId: string): Promise<InputStatusCounts> {
    return countInputs(this.pool, sessionId);
  }

  loadOpenToolCalls(sessionId: string): Promise<ToolCallRecord[]> {
    return loadOpenToolCalls(this.pool, sessionId);
  }

  getUsageRounds(sessionId: string, inputSeq?: number): Promise<UsageRoundRecord[]> {
    return getUsageRounds(this.db, sessionId, inputSeq);
  }

  loadRunState(sessionId: string, inputSeq: number): Promise<RunState> {
    return loadRunState(this.reads, this.windows, sessionId, inputSeq);
  }

  requestCancel(sessionId: string): Promise<Date> {
    return requestCancel(this.db, sessionId);
  }

  clearCancel(params: FencedParams): Promise<void> {
    return clearCancel(this.pool, params);
  }

  readCancelRequest(sessionId: string): Promise<Date | null> {
    return readCancelRequest(this.pool, sessionId);
  }

  parkInput(params: ParkInputParams): Promise<void> {
    return parkInput(this.pool, params);
  }

  spawnChild(params: SpawnChildParams): Promise<SpawnChildResult> {
    return spawnChild(this.pool, this.spawns, params);
  }

  deliverChildResult(childSessionId: string, payload: ChildResultPayload): Promise<ChildDelivery | null> {
    return deliverChildResult(this.pool, childSessionId, payload);
  }

  requestCancelTree(sessionId: string): Promise<CancelledTree> {
    return requestCancelTree(this.pool, sessionId);
  }

  listChildren(sessionId: string): Promise<ChildSessionRecord[]> {
    return listChildren(this.pool, sessionId);
  }

  setBudget(write: BudgetWrite): Promise<BudgetRecord> {
    return setBudget(this.pool, write);
  }

  getBudget(id: number): Promise<BudgetRecord | null> {
    return getBudget(this.pool, id);
  }

  listBudgets(options?: ListBudgetsOptions): Promise<BudgetRecord[]> {
    return listBudgets(this.pool, options);
  }

  deleteBudget(id: number): Promise<boolean> {
    return deleteBudget(this.pool, id);
  }

  usageReport(query: UsageQuery): Promise<UsageReportRows> {
    return usageReport(this.pool, query);
  }

  setTenantSettings(tenant: string, patch: TenantSettingsPatch): Promise<TenantSettingsRecord> {
    return setTenantSettings(this.pool, tenant, patch);
  }

  getTenantSettings(tenant: string): Promise<TenantSettingsRecord | null> {
    return getTenantSettings(this.pool, tenant);
  }

  listTenantSettings(options?: ListTenantSettingsOptions): Promise<TenantSettingsRecord[]> {
    return listTenantSettings(this.pool, options);
  }

  deleteTenantSettings(tenant: string): Promise<boolean> {
    return deleteTenantSettings(this.pool, tenant);
  }
}
