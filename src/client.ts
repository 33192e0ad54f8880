/**
 * `loopfleet/client`: what a producer imports to hand inputs to sessions and follow them, and
 * nothing more (`import { SessionQueue } from 'loopfleet/client'`).
 *
 * It loads the queue, Postgres and Redis drivers a producer needs, and never the LLM SDKs, the
 * worker, the gateway or the MCP client: a web server that only enqueues inputs stays small. The
 * package's main entry (`loopfleet`) exports all of this too, with the agent, tool and hook
 * definitions beside it.
 */

export { SessionQueue, type SessionQueueEnvOptions, type SubscribeOptions } from './producer/session-queue.js';
export { SESSION_QUEUE_DEFAULTS, type SessionQueueOptions } from './producer/session-queue-options.js';
export { createPgPool, type PgPoolOptions } from './store/postgres/pool.js';
export { MAX_HISTORY_PAGE } from './store/history/history-options.js';
export type { AddData, AddKind, AddOptions } from './producer/add-request.js';
export type { InputHandle } from './producer/input-handle.js';
export type { InputOutcome } from './producer/input-outcome.js';
export type { InputEventsOptions } from './producer/input-events.js';
export type { ResultOptions } from './producer/wait-for-result.js';
export { ResultTimeoutError } from './producer/result-timeout-error.js';
export type { SessionAdmin } from './producer/session-admin.js';
export type { ScheduledTimer, TimerAddData, TimerAdmin, TimerOptions } from './producer/timer-admin.js';
export type { TimerRecord, TimerStatus } from './core/ports/timer-store.js';
export type { Budget, BudgetAdmin, BudgetParams } from './producer/budget-admin.js';
export type { UsageReport, UsageRow, UsageTotals } from './producer/usage-report.js';
export type { TenantAdmin } from './producer/tenant-admin.js';
export type {
  BudgetPeriod,
  BudgetScope,
  BudgetUnit,
  ListBudgetsOptions,
  ListTenantSettingsOptions,
  TenantSettingsPatch,
  TenantSettingsRecord,
  UsageGroupBy,
  UsageQuery,
} from './core/ports/tenant-admin.js';
export type { ChildSummary, InputCounts, SessionStatsReport, SessionTree } from './producer/session-stats.js';
export type { AgentWorker, RegisteredAgent } from './core/ports/agent-registry.js';
export { cancelChannel, eventStreamKey, JOB, timerJobId, type JobName, type TimerJobData } from './fleet/fleet-keys.js';
export { shardOf, shardPrefix, type RedisLayout } from './fleet/redis-layout.js';

export * from './core/errors/index.js';

export type {
  EventEnvelopeFields,
  FleetEvent,
  FleetEventType,
  LifecycleEvent,
  StreamEvent,
  StreamGap,
  StreamItem,
  EventSubscription,
} from './fleet/fleet-events.js';
export type { LoopEvent, LoopEventType } from './core/events/loop-events.js';

export type { InputOverrides } from './core/agent-profile.js';
export type { CreateSessionParams, ListSessionsOptions, LoadHistoryOptions, SessionPage, SessionSummary } from './core/ports/session-store.js';
export type { ContentPart, Message, MessageContent, MessageKind, Role, StoredMessage, ToolCall } from './core/messages.js';
export type {
  AgentRef,
  InputKind,
  InputMode,
  InputRecord,
  InputResult,
  InputStatus,
  RunOutcome,
  SessionRecord,
  SessionStats,
  SessionStatus,
  Usage,
} from './core/session-types.js';
