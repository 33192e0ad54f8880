import { setMaxListeners } from 'node:events';
import { loadClientConfig } from '../config/index.js';
import { InfrastructureError, InputInvalidError, SessionNotFoundError, StateConflictError } from '../core/errors/index.js';
import type { StoredMessage } from '../core/messages.js';
import type { CancelledTree, LoadHistoryOptions } from '../core/ports/session-store.js';
import { guardedStoreCall } from '../core/ports/guard-store.js';
import type { RegisteredAgent } from '../core/ports/agent-registry.js';
import { whileLinked } from '../core/linked-signal.js';
import { assertNewSessionId, assertSessionId } from '../fleet/session-id.js';
import { followSessionEvents, readNewest } from '../events/event-subscriber.js';
import type { EventSubscription } from '../fleet/fleet-events.js';
import { assertCursor, ONLY_NEW } from '../events/stream-id.js';
import { resolveHistoryOptions } from '../store/history/history-options.js';
import { acceptAndReport } from '../fleet/accept-input.js';
import { TenantAdmission } from '../fleet/tenant-admission.js';
import { readSessionTenant, readTenantRates } from '../store/tenants/read-tenant-rates.js';
import { kickSession } from '../fleet/kick.js';
import { assertInteractionPending } from './pending-interaction.js';
import { toAcceptRequest, type AddData, type AddKind, type AddOptions } from './add-request.js';
import { cancelChannel } from '../fleet/fleet-keys.js';
import type { RedisLayout } from '../fleet/redis-layout.js';
import { createInputHandle, type HandleBackend, type InputHandle } from './input-handle.js';
import { inputEvents, type InputEventsOptions } from './input-events.js';
import type { InputOutcome } from './input-outcome.js';
import { openQueueConnections, type QueueConnections } from './queue-connections.js';
import { clientQueueOptions } from './session-queue-options.js';
export { clientQueueOptions };
import { SessionAdmin } from './session-admin.js';
import { BudgetAdmin } from './budget-admin.js';
import { TenantAdmin } from './tenant-admin.js';
import type { UsageQuery } from '../core/ports/tenant-admin.js';
import { readUsageReport, type UsageReport } from './usage-report.js';
import { resolveSessionQueueOptions, type ResolvedQueueOptions, type SessionQueueOptions } from './session-queue-options.js';
import { readSessionStats, type SessionStatsReport } from './session-stats.js';
import { attemptWithin } from '../fleet/settle-within.js';
import { TimerAdmin, type ScheduledTimer, type TimerAddData } from './timer-admin.js';
import { waitForResult, type ResultOptions } from './wait-for-result.js';
import { addSpan, withProducerSpan } from '../observability/tracing/producer-span.js';
import { startTracing, TRACING_OFF, type Tracing } from '../observability/tracing/start-tracing.js';
import { traceExporterKind } from '../observability/tracing/tracing-settings.js';

/** Options of {@link SessionQueue.subscribe}. */
export interface SubscribeOptions {
  /** Read after this stream id: a cursor received earlier, `'0'` for everything retained, `'$'` (default) for only new events. */
  after?: string;
  /** Ends the iteration promptly, even during a blocked read. */
  signal?: AbortSignal;
}

/** Options of {@link SessionQueue.fromEnv}: what the environment does not say. */
export type SessionQueueEnvOptions = Pick<SessionQueueOptions, 'logger' | 'redisTimeoutMs' | 'recheckMs'>;

/**
 * The client applications import (docs/client.md): hands inputs to sessions
 * with the same call shape as BullMQ's `Queue.add`, follows their events on the session's Redis
 * stream, and reads outcomes and history from Postgres, the system of record.
 *
 * `add` returns once the input is durable in Postgres (I1); the drain kick follows the commit and a
 * Redis failure does not fail the add. Every argument is validated before anything is written, with
 * typed errors carrying stable codes (`session.invalid_id`, `input.invalid`, `input.too_large` …).
 */
export class SessionQueue {
  /** The BullMQ queue (and Redis key prefix) this client talks to. */
  readonly queueName: string;
  /** Explicit session management: `create`, `get`, `delete`. */
  readonly sessions: SessionAdmin;
  /** Durable timers: `schedule`, `get`, `list`, `cancel`. */
  readonly timers: TimerAdmin;
  /** Spending caps: `set`, `get`, `list`, `delete` (docs/budgets.md). */
  readonly budgets: BudgetAdmin;
  /** Per-tenant dispatch settings: `set`, `get`, `list`, `delete`. */
  readonly tenants: TenantAdmin;
  readonly #options: ResolvedQueueOptions;
  readonly #conn: QueueConnections;
  readonly #closed = new AbortController();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #backend: HandleBackend;
  /** The tenants' admission rates, checked before each add writes (docs/tenant-limits.md). */
  readonly #admission: TenantAdmission;
  #closing: Promise<void> | null = null;
  /** Tracing {@link SessionQueue.fromEnv} started (`OTEL_TRACES_EXPORTER` set); flushed by close. */
  #tracing: Promise<Tracing> | null = null;

  constructor(options: SessionQueueOptions = {}) {
    this.#options = resolveSessionQueueOptions(options);
    // Every pending result() and every subscription listens on it while it lasts: many at once is
    // the normal case, not a leak, so Node's warning past 10 listeners is switched off for it.
    setMaxListeners(0, this.#closed.signal);
    this.queueName = this.#options.queueName;
    this.#conn = openQueueConnections(this.#options);
    this.sessions = new SessionAdmin({
      store: this.#conn.store,
      redis: this.#conn.redis,
      queueName: this.queueName,
      layout: this.#conn.queue.layout,
      logger: this.#options.logger,
      redisTimeoutMs: this.#options.redisTimeoutMs,
      run: async (work) => {
        this.#assertOpen();
        return this.#track(work());
      },
    });
    this.timers = new TimerAdmin({
      timers: this.#conn.timers,
      queue: this.#conn.queue,
      logger: this.#options.logger,
      redisTimeoutMs: this.#options.redisTimeoutMs,
      run: async (work) => {
        this.#assertOpen();
        return this.#track(work());
      },
    });
    const { pool } = this.#conn;
    this.#admission = new TenantAdmission(
      Object.assign(
        {
          redis: this.#conn.redis,
          queueName: this.queueName,
          readRates: () => guardedStoreCall('readTenantRates', readTenantRates(pool)),
          readSessionTenant: (sessionId: string) => guardedStoreCall('readSessionTenant', readSessionTenant(pool, sessionId)),
          redisTimeoutMs: this.#options.redisTimeoutMs,
        },
        this.#options.logger !== null ? { logger: this.#options.logger } : {},
      ),
    );
    this.budgets = new BudgetAdmin({
      store: this.#conn.store,
      run: async (work) => {
        this.#assertOpen();
        return this.#track(work());
      },
    });
    this.tenants = new TenantAdmin({
      store: this.#conn.store,
      run: async (work) => {
        this.#assertOpen();
        return this.#track(work());
      },
    });
    this.#backend = {
      result: (sessionId, seq, resultOptions) => this.result(sessionId, seq, resultOptions),
      inputEvents: (sessionId, seq, acceptedEventId, eventOptions) => this.#inputEvents(sessionId, seq, acceptedEventId, eventOptions),
    };
  }

  /**
   * A queue configured like the workers, validated by the same loader: `DATABASE_URL`,
   * `REDIS_URL`, `LOOPFLEET_QUEUE`, `LOOPFLEET_MAX_INPUT_BYTES`, `DATABASE_POOL_SIZE`,
   * `DATABASE_STATEMENT_TIMEOUT_MS`, `DATABASE_BATCH_SIZE`, `DATABASE_BATCH_STATEMENTS`,
   * `LOOPFLEET_EVENTS_MAXLEN` and `LOOPFLEET_EVENTS_TTL_SECONDS`. Throws `config.invalid`.
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, options: SessionQueueEnvOptions = {}): SessionQueue {
    const traced = traceExporterKind(env) !== null;
    const queue = new SessionQueue(Object.assign({}, options, clientQueueOptions(loadClientConfig(env))));
    // Loaded in the background (adds wait for it); close() flushes what is buffered (docs/tracing.md).
    if (traced) queue.#tracing = startTracing(env, { serviceName: 'loopfleet-client' }).catch(() => TRACING_OFF);
    return queue;
  }

  /**
   * Accepts an input: `add('send', { sessionId, input })` or `add('resume', { sessionId, submit? ,
   * abortPending? })`. Durable before it resolves; a repeated `inputId` returns the original seq
   * (`duplicate: true`) and queues nothing. Throws `input.invalid` for an unknown kind,
   * `session.invalid_id`, `input.too_large`. `add('timer', { sessionId, delayMs | at, note, everyMs?,
   * timerId? })` schedules a durable timer instead (`timers.schedule`) and resolves with it.
   */
  async add(kind: 'timer', data: TimerAddData): Promise<ScheduledTimer>;
  async add(kind: AddKind, data: AddData, opts?: AddOptions): Promise<InputHandle>;
  async add(kind: AddKind | 'timer', data: AddData | TimerAddData, opts?: AddOptions): Promise<InputHandle | ScheduledTimer> {
    this.#assertOpen();
    if (kind === 'timer') {
      if (opts !== undefined) throw new InputInvalidError('add("timer", …) takes no third argument: give timerId in the data');
      return this.timers.add(data as TimerAddData);
    }
    const request = toAcceptRequest(kind, data, opts);
    // fromEnv with tracing on: the first adds wait for the SDK to load, so their spans are recorded too.
    if (this.#tracing !== null) await this.#tracing;
    const span = addSpan(this.queueName, request.sessionId, kind);
    return this.#track(withProducerSpan(span.name, span.attributes, (traceContext) => this.#accept(traceContext === null ? request : Object.assign({}, request, { traceContext }))));
  }

  /**
   * The terminal outcome of input `seq` of a session, as soon as it has one: from its
   * `input_finished` event as announced on the session's finish channel (one subscribed connection
   * serves all of this queue's waits), or from Postgres when it already finished or the
   * announcement was lost.
   * Rejects with {@link ResultTimeoutError} after `timeoutMs`, with the signal's reason when
   * `signal` aborts, `session.not_found` / `input.invalid` when there is no such input.
   */
  async result(sessionId: string, seq: number, options?: ResultOptions): Promise<InputOutcome> {
    this.#assertOpen();
    const { store, finishes } = this.#conn;
    const { recheckMs, redisTimeoutMs, logger } = this.#options;
    const deps = { store, finishes, recheckMs, redisTimeoutMs, logger, closed: this.#closed.signal };
    return this.#track(waitForResult(deps, sessionId, seq, options));
  }

  /**
   * Follows a session's event stream (touch point 2): every entry as a `StreamEvent` whose `id` is a
   * cursor to resume after, and a `gap` whenever events were lost (rebuild from `history()` and
   * `result()`). Runs until `signal` aborts, the caller stops iterating, or the queue closes. Throws
   * `session.invalid_id`, also for an id ending in `:seq` or `:finished` (another session's keys).
   */
  subscribe(sessionId: string, options: SubscribeOptions = {}): EventSubscription {
    this.#assertOpen();
    // An id ending in a reserved suffix (`a:seq`) names another session's key, not a stream: no input
    // can be accepted under it, and one stored before the rule is read with history() and result().
    const id = assertNewSessionId(sessionId);
    const { after = ONLY_NEW, signal } = optionsObject(options, 'subscribe options');
    assertCursor(after, { allowOnlyNew: true });
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InputInvalidError('signal must be an AbortSignal');
    // Linked, not AbortSignal.any: the close signal lives as long as the queue, and each `any` would
    // leave an entry on it for good (src/core/linked-signal.ts).
    const { redis } = this.#conn;
    // '$' is taken now, not when iteration starts: the newest entry is read at once (on the queue's
    // connection, which re-sends a read a reconnect cut off), before an `add` made next can publish.
    const newest = after === ONLY_NEW ? readNewest(redis, this.layout, id) : null;
    return whileLinked([this.#closed.signal, signal], (linked) =>
      followSessionEvents(redis, { queueName: this.layout, sessionId: id, after, signal: linked }, newest, this.#conn.tails.open),
    );
  }

  /**
   * The session's messages in seq order; with `includeCompacted`, also those folded away by
   * compaction. Pages with `afterSeq` (a message seq, exclusive) and `limit` (1 to
   * `MAX_HISTORY_PAGE`, 10,000): pass the last seq of a page as the next `afterSeq`; a page shorter
   * than `limit` is the last. Without `limit`, every message after `afterSeq` in one read. Throws
   * `session.not_found`, and `input.invalid` for malformed options.
   */
  async history(sessionId: string, options: LoadHistoryOptions = {}): Promise<StoredMessage[]> {
    this.#assertOpen();
    const id = assertSessionId(sessionId);
    const { includeCompacted, afterSeq, limit } = resolveHistoryOptions(options);
    return this.#track(this.#history(id, limit === null ? { includeCompacted, afterSeq } : { includeCompacted, afterSeq, limit }));
  }

  /**
   * The agents the fleet serves now, by name then version, each with its workers and when they were
   * last seen: what an add or a create may name (besides `default`). From the agent registry.
   */
  async agents(): Promise<RegisteredAgent[]> {
    this.#assertOpen();
    return this.#track(guardedStoreCall('listAgents', this.#conn.registry.listAgents()));
  }

  /**
   * Usage recorded in `[from, to)` — of one tenant and one agent if given — grouped by UTC `day`,
   * `agent`, `model` (`provider:model`) or `session`, with totals; costs exact (`costPicoUsd`, integer
   * text) and in USD (`costUsd`). From Postgres (docs/usage.md). Throws `input.invalid` for a bad query.
   */
  async usage(query: UsageQuery): Promise<UsageReport> {
    this.#assertOpen();
    return this.#track(readUsageReport(this.#conn.store, query));
  }

  /** Cumulative stats of the session and its inputs counted by status. Throws `session.not_found`. */
  async stats(sessionId: string): Promise<SessionStatsReport> {
    this.#assertOpen();
    return this.#track(readSessionStats(this.#conn.store, assertSessionId(sessionId)));
  }

  /**
   * Cancels the session's running input: sets the durable flag in Postgres, then
   * tells the lease holder at once over Redis pub/sub; the input ends `cancelled`, keeping what it
   * produced. Returns false when there is no such session. Throws `system.infrastructure` when the
   * live signal could not be sent (the flag is set; calling again is safe).
   */
  async cancel(sessionId: string): Promise<boolean> {
    this.#assertOpen();
    return this.#track(this.#cancel(assertSessionId(sessionId)));
  }

  /**
   * Answers a `request_user_input` question: `add('resume', { sessionId, submit: { interactionId, value } })`. Throws
   * `interaction.not_pending` when the session waits on no question with that id, `session.not_found` without the session.
   */
  async submitInput(sessionId: string, interactionId: string, value: unknown, opts?: AddOptions): Promise<InputHandle> {
    return this.add('resume', { sessionId, submit: { interactionId, value } }, opts);
  }

  /** Closes every open tool call with `<aborted: reason>`: `add('resume', { sessionId, abortPending: { reason } })`. */
  async abortPending(sessionId: string, reason = 'aborted', opts?: AddOptions): Promise<InputHandle> {
    return this.add('resume', { sessionId, abortPending: { reason } }, opts);
  }

  /**
   * Ends every wait and subscription (pending `result()` calls reject with `cancelled`), lets adds in
   * progress finish, then closes the connections this queue opened — never those passed in.
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#closed.abort();
    await Promise.allSettled([...this.#inFlight]);
    await this.#conn.close();
    await (await this.#tracing)?.shutdown();
  }

  async #accept(request: ReturnType<typeof toAcceptRequest>): Promise<InputHandle> {
    let acceptedEventId: string | null = null;
    const { store, queue, fair, publisher } = this.#conn;
    await assertInteractionPending(store, request);
    const { accepted, wakeQueued } = await acceptAndReport(
      {
        store,
        queue,
        fair,
        maxInputBytes: this.#options.maxInputBytes,
        kickTimeoutMs: this.#options.redisTimeoutMs,
        admission: this.#admission,
        ...(this.#options.logger !== null ? { logger: this.#options.logger } : {}),
        publish: async (sessionId, inputSeq, event) => {
          acceptedEventId = await publisher.publish(sessionId, inputSeq, event);
        },
      },
      request,
    );
    return createInputHandle(this.#backend, accepted, { acceptedEventId, wakeQueued });
  }

  async #history(sessionId: string, options: LoadHistoryOptions): Promise<StoredMessage[]> {
    const messages = await this.#conn.store.loadHistory(sessionId, options);
    // An empty history is ambiguous: a new session, or a mistyped id that should not pass silently.
    if (messages.length === 0 && (await this.#conn.store.getSession(sessionId)) === null) {
      throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
    }
    return messages;
  }

  #inputEvents(sessionId: string, seq: number, acceptedEventId: string | null, options: InputEventsOptions = {}): EventSubscription {
    this.#assertOpen();
    const { signal } = optionsObject(options, 'events options');
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InputInvalidError('signal must be an AbortSignal');
    const { store, redis, tails } = this.#conn;
    const deps = { store, redis, openTail: tails.open, queueName: this.layout, recheckMs: this.#options.recheckMs, closed: this.#closed.signal };
    return inputEvents(deps, { sessionId, seq, acceptedEventId }, options);
  }

  async #cancel(sessionId: string): Promise<boolean> {
    let tree: CancelledTree;
    try {
      tree = await this.#conn.store.requestCancelTree(sessionId);
    } catch (error) {
      if (error instanceof SessionNotFoundError) return false;
      throw error;
    }
    // The session and every child below it (docs/child-sessions.md): a running one stops at once.
    const ids = [sessionId, ...tree.descendants];
    const pipeline = this.#conn.redis.pipeline();
    for (const id of ids) pipeline.publish(cancelChannel(this.queueName), id);
    const sent = await attemptWithin(pipeline.exec(), this.#options.redisTimeoutMs);
    if (!sent.ok) {
      const message = `cancel of session ${sessionId} is recorded in Postgres, but the live signal could not be sent over Redis`;
      throw new InfrastructureError(sent.timedOut ? `${message} (timed out)` : message, { cause: sent.error, details: { sessionId } });
    }
    // A parent waiting for its children holds no worker: it is woken to end `cancelled`, and its
    // children's pending inputs to end so too. A lost kick is the sweeper's (the flag is durable).
    if (tree.descendants.length > 0) {
      const kicked = await attemptWithin(Promise.all(ids.map((id) => kickSession({ queue: this.#conn.queue, fair: this.#conn.fair }, { sessionId: id, tenant: tree.tenant }))), this.#options.redisTimeoutMs);
      if (!kicked.ok) this.#options.logger?.warn({ err: kicked.error, sessionId }, 'cancel recorded; its sessions were not all kicked (the sweeper will)');
    }
    return true;
  }

  /**
   * Where this queue's keys are: its name on one Redis node; on a Redis Cluster its shards, under
   * whose hash tags its sessions' streams live (`eventStreamKey(queue.layout, id)` names one).
   */
  get layout(): RedisLayout {
    return this.#conn.queue.layout;
  }

  #assertOpen(): void {
    if (this.#closed.signal.aborted) throw new StateConflictError('SessionQueue is closed');
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const forget = (): void => {
      this.#inFlight.delete(work);
    };
    work.then(forget, forget);
    return work;
  }
}

/** A method's optional options argument: absent, or an object (JavaScript callers may pass anything). */
function optionsObject<T extends object>(value: T | undefined, what: string): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputInvalidError(`${what} must be an object`);
  return value;
}
