import type { RedisNodeAddress } from '../fleet/redis-connection.js';

/** The LLM back ends a worker can talk to. `scripted` replays canned replies and needs no network. */
export const LLM_PROVIDERS = ['openai', 'anthropic', 'scripted'] as const;
export type LlmProviderName = (typeof LLM_PROVIDERS)[number];

/** The HTTP clients the provider SDKs can send with (`LLM_HTTP_CLIENT`). */
export const LLM_HTTP_CLIENTS = ['node', 'fetch'] as const;
export type LlmHttpClient = (typeof LLM_HTTP_CLIENTS)[number];

/** pino's built-in levels, most to least severe; `silent` turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What stands between the workers' pools and Postgres (`DATABASE_POOLER`, docs/postgres-pooling.md). */
export const DATABASE_POOLERS = ['none', 'session', 'transaction'] as const;
export type DatabasePooler = (typeof DATABASE_POOLERS)[number];

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Credentials and endpoint of one hosted LLM provider. */
export interface ProviderEndpointConfig {
  /** API key (`OPENAI_API_KEY` / `ANTHROPIC_API_KEY`); `null` when unset. A secret: never log it. */
  apiKey: string | null;
  /** http(s) base URL overriding the SDK's default (`*_BASE_URL`); `null` = the provider's own. */
  baseUrl: string | null;
}

/** Which model answers, and how long a request may take. */
export interface LlmConfig {
  /**
   * `LLM_PROVIDER`. Default: `openai` if `OPENAI_API_KEY` is set, else `anthropic` if
   * `ANTHROPIC_API_KEY` is set, else `scripted` (works offline).
   */
  provider: LlmProviderName;
  /** `LLM_MODEL`. Default per provider: `gpt-4o-mini`, `claude-sonnet-4-5`, `scripted`. */
  model: string;
  /** OpenAI settings; used when `provider` is `openai`. */
  openai: ProviderEndpointConfig;
  /**
   * `LLM_HTTP_CLIENT`: how the OpenAI and Anthropic SDKs send their requests. `node` (default):
   * `node:http`/`https` with kept-alive connections (src/llm/node-http-fetch.ts) — about a quarter less
   * worker CPU per OpenAI call than `fetch`; `fetch`: Node's global `fetch` (undici), e.g. behind a
   * proxy set with undici's `setGlobalDispatcher`, which `node` does not use.
   */
  httpClient: LlmHttpClient;
  /**
   * `OPENAI_PROMPT_CACHE_KEY`: send the session id as `prompt_cache_key` on OpenAI calls, so one
   * session's calls share a prompt cache (docs/llm-providers.md, "Prompt caching"). Turn it off for an
   * OpenAI-compatible endpoint that refuses fields it does not know. Default true.
   */
  openaiPromptCacheKey: boolean;
  /** Anthropic settings; used when `provider` is `anthropic`. */
  anthropic: ProviderEndpointConfig;
  /**
   * `LLM_REQUEST_TIMEOUT_MS`: how long one LLM call may wait for the response to begin, and the longest
   * pause between two streamed chunks (a stalled stream fails as retryable), in milliseconds: it
   * bounds each attempt. The retry policy's total deadline bounds retrying (no attempt starts past
   * it) but never cuts an attempt still streaming. Default 120000.
   */
  requestTimeoutMs: number;
  /**
   * `LLM_FALLBACK`: `provider:model` pairs that serve calls when the primary is unavailable, in order
   * (comma-separated). Default: none.
   */
  fallback: { provider: LlmProviderName; model: string }[];
}

/** How a worker process takes and runs jobs. */
export interface WorkerConfig {
  /** `WORKER_CONCURRENCY`: jobs one process runs at once, 1–10000. Default 16. */
  concurrency: number;
  /**
   * `WORKER_HEAP_GROWTH_PERCENT`: how far V8 lets the old generation grow past what survived its last
   * full collection before it collects again, in percent (V8's `--heap-growing-percent`), set by
   * `loopfleet worker` at start; 0–1000, 0 leaves V8 its own factor (up to 300 % more). Default 100.
   * Inputs in flight keep their objects alive across a model call, so most of them are garbage of the
   * old generation once the inputs end; left to V8, it lets that garbage grow to several times the
   * live heap first (bench/history/log-to-session-30.md, item 30: 2,000 inputs in flight peaked at 418–433 MB with V8's factor,
   * 320–342 MB with 100, for 4–8 % more CPU).
   */
  heapGrowthPercent: number;
  /**
   * `DATABASE_POOL_SIZE`: Postgres connections one worker process opens at most, 1–1000. Default 10.
   * Every store operation of a run is one statement, so a connection is held only for a round trip:
   * 10 serve hundreds of concurrent inputs. Workers × this (plus producers' pools) must stay below
   * the server's `max_connections` (100 by default) — the limit to watch when scaling out.
   */
  poolSize: number;
  /**
   * `DATABASE_POOLER`: `none` (default; the pool talks to Postgres itself), `session` (a pooler in
   * session mode: no `statement_timeout` startup parameter, which PgBouncer refuses) or
   * `transaction` (a pooler in transaction mode, e.g. PgBouncer 1.18: that, and every statement sent
   * unnamed instead of as a named prepared statement). docs/postgres-pooling.md.
   */
  pooler: DatabasePooler;
  /**
   * `DATABASE_STATEMENT_TIMEOUT_MS`: longest one Postgres statement may run, in milliseconds,
   * 0 (none) or 1000–3600000. Default 30000. The server cancels a statement past it (`statement_timeout`; it
   * wrote nothing), and the client gives up a second later on one the server never answered (a
   * connection gone silent: a partition, a frozen host), discarding the connection. Without it such
   * a statement held its batch's slot, and every write queued behind it, until a restart while the
   * lease kept being renewed on other connections (docs/store.md, "Connections").
   */
  statementTimeoutMs: number;
  /**
   * Cross-session group commit (docs/store.md): writes of different sessions that are ready at the
   * same moment — accepts, lease takes and claims, loop steps, lease releases — go in one statement, each row fenced on its own.
   * The hot reads (run state, inbox) share round trips within the same limits.
   * `DATABASE_BATCH_SIZE`: most writes per statement, 1–1000 (1 turns batching off). Default 64.
   * `DATABASE_BATCH_STATEMENTS`: most batched statements running at once, 1–1000; writes ready
   * meanwhile wait for one to finish and go together. Default 2. Must be below `DATABASE_POOL_SIZE`.
   * `DATABASE_BATCH_OVERLAP_MIN`: beyond the first statement running, another starts only while at
   * least this many writes (or reads) wait, 1–100000. Default 16: a worker below saturation runs one
   * statement at a time, so its writes share more of them; a busy one overlaps two
   * (bench/history/log-to-session-30.md, item 43).
   */
  batch: { maxSize: number; maxInFlight: number; overlapMinWaiting: number };
  /**
   * The worker's cache of long active windows (docs/store.md, "The window cache"): a run of a session
   * whose window it holds reads only the messages appended since.
   * `WINDOW_CACHE_MB`: estimated size all cached windows may take, in MiB (0 = off). Default 64.
   * `WINDOW_CACHE_MIN_MESSAGES`: shorter windows are read whole every run instead. Default 1 (all).
   */
  windowCache: { maxBytes: number; minMessages: number };
  /** `LEASE_TTL_MS`: how long a session lease lives without renewal, in milliseconds (≥ 1000). Default 30000. */
  leaseTtlMs: number;
  /**
   * `WORKER_BLOCKED_EXIT_MS`: how long the worker's event loop may be blocked (a tool or hook that
   * never yields) before a watchdog thread kills the process, in milliseconds; 0 (off) or ≥ 1000.
   * Default 30000, the default `LEASE_TTL_MS`: a process blocked that long has lost every lease it
   * held (renewals are timers of the blocked thread), so waiting longer only keeps a frozen process,
   * and no legitimate synchronous stretch (a GC, a large JSON parse) comes near it. Its sessions move
   * to other workers, and the input that blocked it counts a start per holder, so
   * `MAX_INPUT_ATTEMPTS` ends it `failed` (docs/fleet.md, "Blocked workers").
   */
  blockedExitMs: number;
  /**
   * `WORKER_JOB_LOCK_MS`: BullMQ's job lock (`lockDuration`; the stalled check runs every half of it),
   * 5000–600000 ms. Default 10000. A job whose worker died is taken over by another within twice this:
   * for a raw job not yet ingested, the only way back (docs/fleet.md, "The job lock").
   */
  jobLockMs: number;
  /** How drains share the fleet and how the sweeper repairs it (docs/fleet.md, Settings). */
  drain: DrainConfig;
  /** `LOOPFLEET_TOOLS`: path of the ES module exporting the tool array; `null` = no tools. Default `null`. */
  toolsModule: string | null;
  /**
   * `LOOPFLEET_AGENTS`: path of an ES module whose default export is an array of agent definitions, or
   * of a `.json` file holding that array (docs/agents.md); `null` = one agent, `default`, built from
   * this environment. Default `null`.
   */
  agentsModule: string | null;
  /** `LOOPFLEET_HOOKS`: path of the ES module exporting the hook array; `null` = no hooks. Default `null`. */
  hooksModule: string | null;
  /** `LOOPFLEET_AGENT_TIMERS`: give agents the `schedule_wakeup` tool (durable timers on their own session). Default false. */
  agentTimers: boolean;
  /**
   * `LOOPFLEET_PRICES`: path of a JSON file of model prices, `{ "provider:model": { input,
   * cachedInput, cacheWrite, output } }` in USD per million tokens, whose entries replace the shipped
   * ones key by key (docs/prices.md); `null` = the shipped prices. Read and checked at start-up. Default `null`.
   */
  pricesFile: string | null;
  /** `LOOPFLEET_MAX_INPUT_BYTES`: largest accepted input payload, in bytes. Default 1048576 (1 MiB). */
  maxInputBytes: number;
}

/** Drain fairness, the sweeper and the poison-input stop. */
export interface DrainConfig {
  /** `DRAIN_SLICE_INPUTS`: inputs one drain runs before yielding its session when more is pending. Default 10. */
  sliceInputs: number;
  /** `DRAIN_SLICE_MS`: time one drain holds a session before yielding when more is pending, in milliseconds. Default 30000. */
  sliceMs: number;
  /** `SWEEP_EVERY_MS`: sweeper period (and the check of its schedule), in milliseconds (≥ 100). Default 5000. */
  sweepEveryMs: number;
  /** `SWEEP_GRACE_MS`: open inputs younger than this are left to their own kick, in milliseconds. Default 2000. */
  sweepGraceMs: number;
  /** `MAX_INPUT_ATTEMPTS`: starts of one input before the drain ends it `failed` (a poison input, I8), 1–1000. Default 10. */
  maxInputAttempts: number;
}

/** Retention and batching of each session's Redis event stream (docs/client.md, "Gaps"). */
export interface EventsConfig {
  /** `LOOPFLEET_EVENTS_MAXLEN`: entries kept per session stream (approximate `MAXLEN ~`). Default 10000. */
  maxLen: number;
  /** `LOOPFLEET_EVENTS_TTL_SECONDS`: a session's stream expires after this long without events. Default 604800 (7 days). */
  idleExpirySeconds: number;
  /** `LOOPFLEET_EVENTS_COALESCE_MS`: text deltas within this window become one entry, in milliseconds. Default 25. */
  coalesceMs: number;
}

/** The Prometheus endpoint. */
export interface MetricsConfig {
  /** `METRICS_PORT`: TCP port of `/metrics`, 0–65535 (0 lets the OS choose). Default 9464. */
  port: number;
  /**
   * `METRICS_TENANT_LABEL`: add a `tenant` label to the cost and token metrics. One series per tenant
   * × agent × model: a cardinality risk with many tenants (docs/prices.md). Default false.
   */
  tenantLabel: boolean;
}

/** What is logged and how. */
export interface LogConfig {
  /** `LOG_LEVEL`: least severe level written. Default `info`. */
  level: LogLevel;
  /** `LOG_FORMAT`: `json` lines, or `pretty` for people at a terminal. Default `pretty` when standard output is a terminal, else `json`. */
  format: LogFormat;
  /** `LOG_CONTENT`: whether message contents (prompts, replies, tool arguments) are logged. Default `false`. */
  content: boolean;
}

/**
 * The whole process configuration, read from the environment and validated once at start-up
 * Every field is present; `null` marks a setting whose absence means something.
 */
export interface ResolvedConfig {
  /** `DATABASE_URL`: Postgres connection string (`postgres:` or `postgresql:`). Default `postgres://postgres:postgres@127.0.0.1:5432/loopfleet`. */
  databaseUrl: string;
  /** `REDIS_URL`: Redis connection string (`redis:` or `rediss:`). Default `redis://127.0.0.1:6379`. */
  redisUrl: string;
  /**
   * `REDIS_CLUSTER_NODES`: `host:port,…` of a Redis Cluster's nodes (any of them; the client finds the
   * rest). Set, Redis is that cluster: `REDIS_URL` then gives only the user, password and scheme
   * (`rediss:` for TLS) every node takes, and its host is ignored. Default unset: one Redis node.
   */
  redisClusterNodes: RedisNodeAddress[] | null;
  /** `LOOPFLEET_QUEUE`: BullMQ queue name, also a Redis key prefix; 1–64 of `[A-Za-z0-9_-]`. Default `loopfleet`. */
  queueName: string;
  /** `LOOPFLEET_QUEUE_SHARDS`: BullMQ queues dispatch is spread over in cluster mode, 1–256. Default 1. */
  queueShards: number;
  /**
   * `FAIR_DISPATCH`: drains get a BullMQ priority from their place in their tenant's line, so tenants
   * take turns on the workers (docs/fair-dispatch.md); false: drains go FIFO. Default true.
   */
  fairDispatch: boolean;
  llm: LlmConfig;
  worker: WorkerConfig;
  events: EventsConfig;
  metrics: MetricsConfig;
  log: LogConfig;
}
