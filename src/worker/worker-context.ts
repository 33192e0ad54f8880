import type { QueueShards } from '../fleet/queue-shards.js';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type { Logger } from 'pino';
import type { LoopDeps } from '../core/loop/run-context.js';
import type { AgentRegistry } from '../core/ports/agent-registry.js';
import type { BudgetPort } from '../core/ports/budgets.js';
import type { Clock } from '../core/ports/clock.js';
import type { SessionStore } from '../core/ports/session-store.js';
import type { TimerStore } from '../core/ports/timer-store.js';
import type { UpkeepStore } from '../core/ports/upkeep-store.js';
import type { FleetEvent } from '../fleet/fleet-events.js';
import type { TenantAdmission } from '../fleet/tenant-admission.js';
import type { FairDispatch } from '../fleet/kick.js';
import type { TenantSettingsCache } from '../fleet/tenant-settings-cache.js';
import type { AgentCatalog } from './agent-catalog.js';
import type { CancelRegistry } from './cancel-registry.js';
import type { WorkerMetrics } from './worker-metrics.js';

/** What the worker needs of the event publisher (src/events). */
export interface EventPublisherPort {
  /**
   * Resolves with the entry's stream id, or '' for an `input_finished` its input already had on the
   * stream (not written again). `fence`: the lease token it is written under; rejects with
   * `lease.lost` once the session was deleted under that token or a later one.
   */
  publish(sessionId: string, inputSeq: number | null, event: FleetEvent, fence?: number): Promise<string>;
  /** A run's sink: the loop's events and the fleet's lifecycle events of that input, queued in order, written under lease `fence`. */
  runSink(sessionId: string, inputSeq: number, fence: number): { emit(event: FleetEvent): void; flush(): Promise<void>; close(): Promise<void> };
}

/** Drain and sweep tuning, resolved once at start-up. */
export interface DrainSettings {
  /** Lease lifetime without renewal, ms (`LEASE_TTL_MS`). The heartbeat renews every third of it. */
  leaseTtlMs: number;
  /** Inputs one drain runs before yielding the session to others (fairness). Default 10. */
  sliceInputs: number;
  /** Time one drain holds a session before yielding when more is pending, ms. Default 30000. */
  sliceMs: number;
  /** Largest accepted raw-path input, bytes. */
  maxInputBytes: number;
  /** Sweeper period, ms. Default 5000. */
  sweepEveryMs: number;
  /** Open inputs younger than this are not considered stranded, ms. Default 2000. */
  sweepGraceMs: number;
  /**
   * Times an input may be started before the drain gives up on it (`failed`, `system.infrastructure`)
   * instead of starting it again: every earlier holder died or was stopped while running it (a
   * takeover, a forced shutdown). Default 10.
   */
  maxInputAttempts: number;
  /**
   * Longest a `timer.fire` hook may take, ms: past it the hook's signal is aborted and the firing is an
   * error, retried like a hook that threw. Default 30000.
   */
  timerHookTimeoutMs: number;
}

/** Everything the job processors share inside one worker process. */
export interface WorkerContext {
  /** Unique per process: `<hostname>:<pid>:<random>`; shown as the lease owner. */
  workerId: string;
  queueName: string;
  settings: DrainSettings;
  store: SessionStore;
  /** The timer rows (the timer job, the sweeper). */
  timers: TimerStore;
  /** The sweeper's stranded sessions and the backlog for `/metrics`. */
  upkeep: UpkeepStore;
  /** Budget enforcement: the loop's reserve and settle, and the sweeper's release of dead holders' reservations. */
  budgets: BudgetPort;
  /** The agent registry: this worker's rows, and the sweeper's prune of dead workers' rows. */
  registry: AgentRegistry;
  /** Producer side of the queue, for kicks. */
  queue: QueueShards;
  /** Fair dispatch between tenants for every kick (docs/fair-dispatch.md); null when `FAIR_DISPATCH=false`. */
  fair: FairDispatch | null;
  /** `tenant_settings`, read at most every 2 s per tenant (weights; caps). */
  tenantSettings: TenantSettingsCache;
  /** The worker's command connection, for reading a session's event stream back. */
  redis: RedisConnection;
  /** The tenants' admission rates, checked on the raw path's ingest (docs/tenant-limits.md); absent: none. */
  admission?: TenantAdmission;
  publisher: EventPublisherPort;
  /** The loop's ports shared by every agent; each run adds its agent's model, tools and profile, and its own event sink. */
  loop: Omit<LoopDeps, 'sink' | 'llm' | 'tools' | 'profile' | 'retryPolicy' | 'agent'>;
  /** The agents this worker serves; a session runs on the one it names. */
  agents: AgentCatalog;
  cancels: CancelRegistry;
  /** What this worker counts for `/metrics`. */
  metrics: WorkerMetrics;
  logger: Logger;
  clock: Clock;
  /** Aborted when shutdown begins: drains finish the input they run, then hand their session back. */
  stopping: AbortSignal;
  /** Aborted when the worker must stop now (second signal or shutdown limit). */
  shutdown: AbortSignal;
}
