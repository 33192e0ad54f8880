import { hostname } from 'node:os';
import { fairDispatch, tenantSettingsCache } from '../store/tenants/tenant-settings-source.js';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Telemetry, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { checkAgentDefinitions, defaultAgent, resolveAgent, type AgentDefinition, type ResolvedAgent } from '../agents/index.js';
import { configuredSecrets, serverAddress, urlSecrets, type ResolvedConfig } from '../config/index.js';
import { checkedAgentProfile, type AgentProfile } from '../core/agent-profile.js';
import { CancelledError } from '../core/errors/index.js';
import { HookRegistry } from '../core/hooks/index.js';
import { systemClock } from '../core/ports/clock.js';
import type { Llm } from '../core/ports/llm.js';
import type { SessionStore } from '../core/ports/session-store.js';
import type { ToolRegistry } from '../core/tools/index.js';
import { publisherConnection, RedisEventPublisher } from '../events/index.js';
import { createLlm } from '../llm/create-llm.js';
import { loggerFromConfig } from '../observability/logger.js';
import { ConnectionTrouble, watchConnection } from '../observability/connection-trouble.js';
import { isConnectionFailure } from '../observability/connection-failure.js';
import { SecretScrubber } from '../observability/redaction.js';
import { cancelChannel } from '../fleet/fleet-keys.js';
import { createPgPool } from '../store/postgres/pool.js';
import { readSessionTenant, readTenantRates } from '../store/tenants/read-tenant-rates.js';
import { TenantAdmission } from '../fleet/tenant-admission.js';
import { PostgresSessionStore } from '../store/postgres-session-store.js';
import { PostgresTimerStore } from '../store/timers/postgres-timer-store.js';
import { PostgresUpkeepStore } from '../store/upkeep/postgres-upkeep-store.js';
import { PostgresBudgetPort } from '../store/budgets/postgres-budget-port.js';
import { PostgresAgentRegistry } from '../store/agents/postgres-agent-registry.js';
import { AgentCatalog } from './agent-catalog.js';
import { agentRegistrations, startAgentRegistration, type HeldRegistration } from './agent-registration.js';
import { CancelRegistry } from './cancel-registry.js';
import { closeWorker, RunningJobs, type WorkerConnections } from './close-worker.js';
import { startEventLoopWatchdog } from './event-loop-watchdog.js';
import { dependencyChecks, startHealthServer } from './health-server.js';
import { createJobProcessor } from './job-router.js';
import { startAgentMcpServers, type AgentMcpServers } from './agent-mcp-servers.js';
import { loadAgentDefinitions } from './load-agents.js';
import { loadHooks } from './load-hooks.js';
import { loadTools } from './load-tools.js';
import { QueueWorker } from './queue-worker.js';
import { connectionLayout, duplicateRedis, openRedis, redisTarget } from '../fleet/redis-connection.js';
import { QueueShards } from '../fleet/queue-shards.js';
import { WorkerTimers } from './worker-timers.js';
import { keepSweeperScheduled, scheduleSweeper } from './sweep-job.js';
import type { DrainSettings, WorkerContext } from './worker-context.js';
import { QUEUE_JOB_STATES, WorkerMetrics } from './worker-metrics.js';
import { bullmqWorkerOptions, drainSettings } from './worker-settings.js';
import { loadPrices } from './load-prices.js';
import type { PriceTable } from '../core/pricing/index.js';
import type { Tracer } from '../core/ports/tracing.js';
import { startTracing, TRACING_OFF, type Tracing } from '../observability/tracing/start-tracing.js';

export interface StartWorkerOptions {
  logger?: Logger;
  llm?: Llm;
  tools?: ToolRegistry;
  hooks?: HookRegistry;
  /** The `default` agent's profile, without `LOOPFLEET_AGENTS` (with it, each agent's own fields count). */
  profile?: Partial<AgentProfile>;
  /**
   * The agents to serve, instead of reading `LOOPFLEET_AGENTS` (each checked as that file's are).
   * With `llm` given too, every agent runs on that model (tests).
   */
  agents?: readonly AgentDefinition[];
  /** Where agents read the key and base URL variables they name. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  settings?: Partial<DrainSettings>;
  /**
   * The store the drain and the loop use, built on the worker's own pool (tests wrap it to observe or
   * hold an operation at an exact point of a drain). Default: the Postgres store.
   */
  wrapStore?: (store: SessionStore) => SessionStore;
  /** Serve /healthz, /readyz and /metrics on `config.metrics.port`. Default true. */
  healthServer?: boolean;
  /** Model prices, instead of the shipped ones and `LOOPFLEET_PRICES` (docs/prices.md). */
  prices?: PriceTable;
  /**
   * Tracing, instead of what the `OTEL_*` variables of `env` start (docs/tracing.md); the caller
   * flushes it. Tests pass one on an in-memory exporter.
   */
  tracing?: Tracing;
}

export interface RunningWorker {
  workerId: string;
  /** The port /healthz listens on (null when disabled). */
  healthPort: number | null;
  /**
   * Stops taking jobs; each running drain finishes the input it runs, then hands the rest of its
   * session back to the fleet. Waits up to `graceMs` (default 30 s); past it, or at once with `force`,
   * the runs are aborted and their sessions handed back too. Then closes Redis, Postgres and the health
   * server. Idempotent; a later call with `force` cuts a graceful close short.
   */
  close(options?: { graceMs?: number; force?: boolean }): Promise<void>;
}

type Connections = WorkerConnections;

/**
 * Starts one worker process's share of the fleet (docs/architecture.md). Tools are loaded and the LLM
 * built before any connection is opened, so bad configuration fails without side effects (I8).
 */
export async function startWorker(config: ResolvedConfig, options: StartWorkerOptions = {}): Promise<RunningWorker> {
  const logger = options.logger ?? loggerFromConfig(config);
  // What leaves here is printed by the command: an error of the operator's modules may quote the
  // environment (a key, a connection string), and a driver's may quote a password.
  const secrets = new SecretScrubber(configuredSecrets(config));
  const scrubbed = (error: unknown): never => {
    throw secrets.error(error);
  };
  // The agent's timer tool is loaded with the others; its connections are bound once they are open.
  const timers = new WorkerTimers();
  const tools = options.tools ?? (await loadTools(config.worker.toolsModule, systemClock, config.worker.agentTimers ? timers : undefined).catch(scrubbed));
  const hooks = options.hooks ?? (await loadHooks(config.worker.hooksModule).catch(scrubbed));
  const prices = options.prices ?? (await loadPrices(config.worker.pricesFile).catch(scrubbed));
  const tracing = options.tracing ?? (await startTracing(options.env ?? process.env, { serviceName: 'loopfleet-worker' }).catch(scrubbed));
  const ownTracing = options.tracing === undefined ? tracing : TRACING_OFF;
  // Checked here, with the tools and the models, before any connection is opened (I8).
  const resolved = await resolveAgents(config, options, tools).catch(scrubbed);
  let mcp: AgentMcpServers | null = null;
  const providerSecrets = agentSecrets(config, resolved);
  const agents = AgentCatalog.build(resolved, {
    loaded: tools,
    llm: (agent) => options.llm ?? createLlm(agent.llm, providerSecrets),
    mcp: (agent) => mcp?.forAgent(agent.ref.name) ?? [],
  });
  // Last of the checks: a required server that cannot start stops the worker before it connects.
  mcp = await startAgentMcpServers(resolved, logger).catch(scrubbed);
  const workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const connections = openConnections(config, logger, tracing.bullmq);
  const stopping = new AbortController();
  const shutdown = new AbortController();
  // Every running drain listens on them (one listener each, removed when the drain ends: linkedSignal,
  // boundWhileStopping); up to WORKER_CONCURRENCY at once is expected, not a leak.
  setMaxListeners(0, shutdown.signal, stopping.signal);
  const ctx = workerContext(config, options, { workerId, logger, agents, hooks, prices, tracer: tracing.tracer, connections, stopping: stopping.signal, shutdown: shutdown.signal });
  timers.bind({ timers: ctx.timers, queue: ctx.queue, logger });
  mcp.reportTo((status) => ctx.metrics.mcpServerStatus(status.server, status.up));
  const jobs = new RunningJobs();
  let accepting = true;
  let workers: Worker[] = [];
  let stopSweeperWatch = (): void => {};
  let health: Awaited<ReturnType<typeof startHealthServer>> | null = null;
  const servers = mcp;
  let registration: HeldRegistration | null = null;
  const closeParts = () => ({
    workers,
    connections,
    shutdown,
    jobs,
    logger,
    after: async () => Promise.all([health?.close(), servers.close(), ownTracing.shutdown()]).then(() => undefined),
    leaveRegistry: async () => registration?.close(),
  });
  try {
    // A message only wakes a check of the durable request: anyone who may PUBLISH can send one.
    connections.subscriber.on('message', (_channel: string, sessionId: string) => void ctx.cancels.signalled(sessionId));
    await connections.subscriber.subscribe(cancelChannel(config.queueName));
    // Before any job is taken: an add naming one of these agents is refused until a worker serves it.
    const held = await startAgentRegistration({ registry: ctx.registry, workerId, agents: agentRegistrations(agents), logger });
    registration = held;
    // What `loopfleet agents` lists follows an MCP server's tool list as it changes.
    mcp.onToolsChange(() => void held.update(agentRegistrations(agents)));
    workers = bullmqWorkers(config, createJobProcessor(ctx), connections, jobs, logger, tracing.bullmq);
    await scheduleSweeper(ctx);
    stopSweeperWatch = keepSweeperScheduled(ctx);
    health =
      options.healthServer === false
        ? null
        : await startHealthServer(config.metrics.port, {
            accepting: () => accepting,
            dependencies: dependencyChecks({ postgres: () => connections.pool.query('SELECT 1'), redis: () => connections.redis.ping() }),
            metrics: () => ctx.metrics.render(),
          });
  } catch (error) {
    // Nothing may stay open: a process whose start failed must exit (I8).
    logger.error({ err: error, workerId }, 'worker failed to start; closing what it opened');
    stopSweeperWatch();
    stopping.abort();
    shutdown.abort(new CancelledError('worker failed to start'));
    await closeWorker(closeParts(), 0).catch((closeError: unknown) => logger.warn({ err: closeError }, 'closing after a failed start failed'));
    throw secrets.error(error);
  }
  // From here a tool or hook that never yields would freeze this process's sessions for good (S4).
  const watchdog =
    config.worker.blockedExitMs > 0
      ? startEventLoopWatchdog({
          boundMs: config.worker.blockedExitMs,
          workerId,
          variable: 'WORKER_BLOCKED_EXIT_MS',
          onError: (error) => logger.error({ err: error }, 'event-loop watchdog failed; running without it'),
        })
      : null;
  for (const worker of workers) void worker.run();
  const served = agents.list().map((agent) => ({ name: agent.ref.name, version: agent.ref.version, provider: agent.provider, model: agent.model }));
  logger.info({ workerId, queue: config.queueName, shards: workers.length, concurrency: config.worker.concurrency, agents: served }, 'worker started');
  let closing: Promise<void> | null = null;
  return {
    workerId,
    healthPort: health?.port ?? null,
    close: (closeOptions = {}) => {
      accepting = false;
      stopping.abort();
      if (closeOptions.force === true) shutdown.abort(new CancelledError('worker shutting down'));
      stopSweeperWatch();
      // The watchdog stops last: a tool that blocks the loop while the close waits for it is still caught.
      closing ??= closeWorker(closeParts(), closeOptions.graceMs ?? 30_000)
        .finally(() => watchdog?.stop())
        .finally(() => logger.info({ workerId }, 'worker stopped'));
      return closing;
    },
  };
}

/**
 * The agents to serve: `options.agents`, else `LOOPFLEET_AGENTS`, else one `default` agent built from
 * the worker's own configuration and every tool it loaded (docs/agents.md).
 */
async function resolveAgents(config: ResolvedConfig, options: StartWorkerOptions, tools: ToolRegistry): Promise<ResolvedAgent[]> {
  const definitions = options.agents ?? (config.worker.agentsModule === null ? null : await loadAgentDefinitions(config.worker.agentsModule));
  if (definitions === null) return [defaultAgent(config, checkedAgentProfile(options.profile), tools.names())];
  const checked = options.agents === undefined ? definitions : checkAgentDefinitions(definitions, 'startWorker({ agents })');
  return checked.map((definition) => resolveAgent(definition, config, options.env ?? process.env));
}

/** What a provider's error text must never show: the worker's own secrets and every agent's key and base URL password. */
function agentSecrets(config: ResolvedConfig, agents: readonly ResolvedAgent[]): string[] {
  const own = configuredSecrets(config);
  for (const { llm } of agents) {
    for (const endpoint of [llm.openai, llm.anthropic]) {
      if (endpoint.apiKey !== null) own.push(endpoint.apiKey);
      own.push(...urlSecrets(endpoint.baseUrl));
    }
  }
  return [...new Set(own)];
}

function openConnections(config: ResolvedConfig, logger: Logger, telemetry: Telemetry | undefined): Connections {
  const postgresTrouble = new ConnectionTrouble(logger, { component: 'postgres', address: serverAddress(config.databaseUrl, 5432) });
  const pool = createPgPool(config.databaseUrl, {
    maxConnections: config.worker.poolSize,
    pooler: config.worker.pooler,
    statementTimeoutMs: config.worker.statementTimeoutMs,
    onIdleClientError: (error: Error) => postgresTrouble.failed(error),
  });
  // A connection lost while in use fails its statement and is released with that error: trouble
  // too, or a cut that finds every connection busy would leave no record at all.
  pool.on('release', (error: Error | undefined) => {
    if (error !== undefined && isConnectionFailure(error)) postgresTrouble.failed(error);
  });
  pool.on('connect', () => postgresTrouble.recovered());
  const target = redisTarget(config);
  const redis = openRedis(target, { maxRetriesPerRequest: null });
  const subscriber = duplicateRedis(redis);
  // BullMQ does not close connections it is given: this one is quit in closeWorker.
  const workerConnection = duplicateRedis(redis, { maxRetriesPerRequest: null });
  // The publisher's own: a script call is never re-sent after a reconnect (publisherConnection).
  const events = publisherConnection(redis);
  // ioredis reconnects by itself, and BullMQ re-emits its connections' errors on the queue and the
  // worker: each failed attempt is one rate-limited JSON record per component, never a printed stack.
  const address = serverAddress(config.redisUrl, 6379);
  const watched = { redis, 'redis.subscriber': subscriber, 'redis.worker': workerConnection, 'redis.events': events };
  for (const [component, connection] of Object.entries(watched)) watchConnection(connection, logger, { component, address });
  const layout = connectionLayout(redis, config.queueName, config.queueShards);
  const queue = QueueShards.open(layout, redis, telemetry === undefined ? {} : { telemetry });
  for (const shard of queue.queues) watchConnection(shard, logger, { component: 'bullmq.queue', address, alsoOtherErrors: true });
  return {
    pool,
    redis,
    subscriber,
    workerConnection,
    events,
    queue,
    publisher: new RedisEventPublisher(events, {
      ownsConnection: true,
      queueName: config.queueName,
      queueShards: config.queueShards,
      maxLen: config.events.maxLen,
      idleExpirySeconds: config.events.idleExpirySeconds,
      coalesceMs: config.events.coalesceMs,
      // Fenced: events of a session deleted while this worker ran one of its inputs, refused on purpose.
      onError: (error, context) =>
        context.stage === 'fenced'
          ? logger.info({ sessionId: context.sessionId, events: context.events }, 'events of a deleted session not written')
          : logger.warn({ err: error, stage: context.stage, sessionId: context.sessionId }, 'event publish failed'),
    }),
  };
}

interface ContextParts {
  workerId: string;
  logger: Logger;
  agents: AgentCatalog;
  hooks: HookRegistry;
  prices: PriceTable;
  tracer: Tracer;
  connections: Connections;
  stopping: AbortSignal;
  shutdown: AbortSignal;
}

function workerContext(config: ResolvedConfig, options: StartWorkerOptions, parts: ContextParts): WorkerContext {
  const { connections, logger } = parts;
  const postgres = new PostgresSessionStore(connections.pool, { batch: config.worker.batch, windowCache: config.worker.windowCache });
  const store = options.wrapStore?.(postgres) ?? postgres;
  const upkeep = new PostgresUpkeepStore(connections.pool);
  const budgets = new PostgresBudgetPort(connections.pool, config.worker.batch);
  const workerLogger = logger.child({ workerId: parts.workerId });
  const tenantSettings = tenantSettingsCache(connections.pool, (error) => workerLogger.warn({ err: error }, 'tenant settings not read; their defaults apply for now'));
  return {
    workerId: parts.workerId,
    queueName: config.queueName,
    settings: drainSettings(config, options.settings),
    store,
    timers: new PostgresTimerStore(connections.pool),
    upkeep,
    budgets,
    registry: new PostgresAgentRegistry(connections.pool),
    queue: connections.queue,
    fair: fairDispatch(config.fairDispatch, tenantSettings, connections.redis),
    tenantSettings,
    redis: connections.redis,
    admission: new TenantAdmission({
      redis: connections.redis,
      queueName: config.queueName,
      readRates: () => readTenantRates(connections.pool),
      readSessionTenant: (sessionId) => readSessionTenant(connections.pool, sessionId),
      logger: workerLogger,
    }),
    publisher: connections.publisher,
    loop: {
      store,
      hooks: parts.hooks,
      prices: parts.prices,
      clock: systemClock,
      budgets,
      tracer: parts.tracer,
      onObserverError: (error) => logger.warn({ err: error }, 'event observer failed'),
    },
    agents: parts.agents,
    cancels: new CancelRegistry((sessionId) => store.readCancelRequest(sessionId), workerLogger),
    metrics: new WorkerMetrics({
      queueName: config.queueName,
      concurrency: config.worker.concurrency,
      tenantLabel: config.metrics.tenantLabel,
      isTool: (name) => parts.agents.hasTool(name),
      events: () => connections.publisher,
      backlog: () => upkeep.readBacklog(config.queueName),
      queueJobs: () => connections.queue.getJobCounts(...QUEUE_JOB_STATES),
    }),
    logger: workerLogger,
    clock: systemClock,
    stopping: parts.stopping,
    shutdown: parts.shutdown,
  };
}

/**
 * The BullMQ workers, one per queue shard, not running yet; their processor calls are counted in
 * `jobs` (the close waits for them). `WORKER_CONCURRENCY` is split over the shards, the first ones
 * taking one more when it does not divide evenly (16 over 6: 3, 3, 3, 3, 2, 2); every shard gets at
 * least 1, so below one per shard the process runs one per shard.
 */
function bullmqWorkers(
  config: ResolvedConfig,
  processor: ReturnType<typeof createJobProcessor>,
  connections: Connections,
  jobs: RunningJobs,
  logger: Logger,
  telemetry: Telemetry | undefined,
): Worker[] {
  const shards = connections.queue.queues;
  const tracked = jobs.track(processor);
  return shards.map((queue, shard) => {
    const concurrency = Math.max(1, Math.floor(config.worker.concurrency / shards.length) + (shard < config.worker.concurrency % shards.length ? 1 : 0));
    const worker = new QueueWorker(config.queueName, tracked, {
      connection: connections.workerConnection,
      prefix: queue.opts.prefix,
      concurrency,
      autorun: false,
      ...bullmqWorkerOptions(config.worker.jobLockMs),
      ...(telemetry !== undefined ? { telemetry } : {}),
    });
    worker.on('lockRenewalFailed', (jobIds) => jobIds.forEach((id) => worker.cancelJob(id, 'lock renewal failed')));
    worker.on('failed', (job, error) => logger.warn({ jobId: job?.id, jobName: job?.name, err: error }, 'job failed'));
    watchConnection(worker, logger, { component: 'bullmq.worker', address: serverAddress(config.redisUrl, 6379), alsoOtherErrors: true });
    return worker;
  });
}
