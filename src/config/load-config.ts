import type { z } from 'zod';
import { ConfigInvalidError } from '../core/errors/index.js';
import { envSchema, type ParsedEnv } from './env-schema.js';
import { KEY_FILE_VARIABLES, withKeyFiles } from './key-files.js';
import type { LlmProviderName, LogFormat, ResolvedConfig } from './resolved-config.js';

/** The model of each provider when neither `LLM_MODEL` nor an agent names one. */
export const DEFAULT_MODEL: Readonly<Record<LlmProviderName, string>> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-sonnet-4-5',
  scripted: 'scripted',
};

/**
 * Reads and validates the whole configuration once (README, "Configuration"). Empty variables count
 * as unset and take their defaults. A key may come from a file (`OPENAI_API_KEY_FILE`,
 * `ANTHROPIC_API_KEY_FILE`), read here, once.
 *
 * @param env - the environment to read; defaults to `process.env`.
 * @throws ConfigInvalidError listing every offending variable at once, with `details.variables`
 *   naming them. Messages never contain an API key or a URL password.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const keyFiles = withKeyFiles(env);
  const result = envSchema.safeParse(keyFiles.env);
  if (keyFiles.problems.length > 0 || !result.success) {
    // A key whose file failed is reported once, against its file variable, not also as missing.
    const failedKeys = new Set<string>(Object.entries(KEY_FILE_VARIABLES).filter(([, file]) => keyFiles.problems.some((problem) => problem.variable === file)).map(([key]) => key));
    const issues = result.success ? [] : result.error.issues.filter((issue) => !failedKeys.has(String(issue.path[0])));
    throw toConfigError([...keyFiles.problems.map((problem) => ({ path: [problem.variable], message: problem.message })), ...issues]);
  }
  checkPoolRoom(result.data);
  return toResolvedConfig(result.data);
}

/**
 * Batched statements hold a pool connection each for their whole round trip: with as many of them
 * as connections, the batched writes alone can take the whole pool, and a lease renewal waits behind
 * them. (The check leaves one connection beside the writes; batched reads, which share the limit,
 * can still take the rest: size the pool well above it, docs/fleet.md.)
 */
function checkPoolRoom(env: ParsedEnv): void {
  if (env.DATABASE_BATCH_STATEMENTS < env.DATABASE_POOL_SIZE) return;
  throw new ConfigInvalidError(
    `Invalid configuration:\n  - DATABASE_BATCH_STATEMENTS: must be below DATABASE_POOL_SIZE (${env.DATABASE_POOL_SIZE}), got ${env.DATABASE_BATCH_STATEMENTS}: each batched statement holds a connection, and lease renewals need one beside them`,
    { details: { variables: ['DATABASE_BATCH_STATEMENTS', 'DATABASE_POOL_SIZE'] } },
  );
}

/**
 * The variables a process that does not run inputs reads: where Postgres, Redis and the queue are,
 * the accept limit, its pool (size, statement timeout) and group commit, and the stream retention
 * its `input_accepted` writes keep (docs/client.md §1; `SessionQueue.fromEnv`). The client commands log nothing of their own,
 * so the `LOG_*` variables are not among them.
 */
export const CLIENT_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'LOOPFLEET_QUEUE',
  'LOOPFLEET_QUEUE_SHARDS',
  'LOOPFLEET_MAX_INPUT_BYTES',
  'DATABASE_POOL_SIZE',
  'DATABASE_POOLER',
  'DATABASE_BATCH_SIZE',
  'DATABASE_BATCH_STATEMENTS',
  'DATABASE_STATEMENT_TIMEOUT_MS',
  'LOOPFLEET_EVENTS_MAXLEN',
  'LOOPFLEET_EVENTS_TTL_SECONDS',
  'FAIR_DISPATCH',
] as const satisfies readonly (keyof ParsedEnv)[];

/**
 * The configuration of a process that does not run inputs — a producer (`SessionQueue.fromEnv`),
 * the client commands, `migrate`: only {@link CLIENT_VARIABLES} are read and validated as in
 * {@link loadConfig}. Every other variable is the workers' (their model and keys, logging, metrics
 * port, drain tuning) and is ignored, so the host application's own `LOG_LEVEL` or a worker's
 * missing key cannot refuse a producer. All other sections are the defaults and must not be used
 * (no model may be built from its `llm`).
 */
export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const clientEnv: NodeJS.ProcessEnv = {};
  for (const name of CLIENT_VARIABLES) clientEnv[name] = env[name];
  return loadConfig(clientEnv);
}

function toResolvedConfig(env: ParsedEnv): ResolvedConfig {
  return {
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    redisClusterNodes: env.REDIS_CLUSTER_NODES,
    queueName: env.LOOPFLEET_QUEUE,
    queueShards: env.LOOPFLEET_QUEUE_SHARDS,
    fairDispatch: env.FAIR_DISPATCH,
    llm: {
      provider: env.LLM_PROVIDER,
      model: env.LLM_MODEL ?? DEFAULT_MODEL[env.LLM_PROVIDER],
      openai: { apiKey: env.OPENAI_API_KEY, baseUrl: env.OPENAI_BASE_URL },
      anthropic: { apiKey: env.ANTHROPIC_API_KEY, baseUrl: env.ANTHROPIC_BASE_URL },
      httpClient: env.LLM_HTTP_CLIENT,
      openaiPromptCacheKey: env.OPENAI_PROMPT_CACHE_KEY,
      requestTimeoutMs: env.LLM_REQUEST_TIMEOUT_MS,
      fallback: env.LLM_FALLBACK,
    },
    worker: {
      concurrency: env.WORKER_CONCURRENCY,
      heapGrowthPercent: env.WORKER_HEAP_GROWTH_PERCENT,
      poolSize: env.DATABASE_POOL_SIZE,
      pooler: env.DATABASE_POOLER,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      batch: { maxSize: env.DATABASE_BATCH_SIZE, maxInFlight: env.DATABASE_BATCH_STATEMENTS, overlapMinWaiting: env.DATABASE_BATCH_OVERLAP_MIN },
      windowCache: { maxBytes: env.WINDOW_CACHE_MB * 1024 * 1024, minMessages: env.WINDOW_CACHE_MIN_MESSAGES },
      leaseTtlMs: env.LEASE_TTL_MS,
      blockedExitMs: env.WORKER_BLOCKED_EXIT_MS,
      jobLockMs: env.WORKER_JOB_LOCK_MS,
      drain: {
        sliceInputs: env.DRAIN_SLICE_INPUTS,
        sliceMs: env.DRAIN_SLICE_MS,
        sweepEveryMs: env.SWEEP_EVERY_MS,
        sweepGraceMs: env.SWEEP_GRACE_MS,
        maxInputAttempts: env.MAX_INPUT_ATTEMPTS,
      },
      toolsModule: env.LOOPFLEET_TOOLS,
      agentsModule: env.LOOPFLEET_AGENTS,
      hooksModule: env.LOOPFLEET_HOOKS,
      agentTimers: env.LOOPFLEET_AGENT_TIMERS,
      pricesFile: env.LOOPFLEET_PRICES,
      maxInputBytes: env.LOOPFLEET_MAX_INPUT_BYTES,
    },
    events: {
      maxLen: env.LOOPFLEET_EVENTS_MAXLEN,
      idleExpirySeconds: env.LOOPFLEET_EVENTS_TTL_SECONDS,
      coalesceMs: env.LOOPFLEET_EVENTS_COALESCE_MS,
    },
    metrics: { port: env.METRICS_PORT, tenantLabel: env.METRICS_TENANT_LABEL },
    log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT ?? defaultLogFormat(process.stdout.isTTY === true), content: env.LOG_CONTENT },
  };
}

/**
 * The log format when `LOG_FORMAT` is unset: `pretty` for a person at a terminal, `json` lines for
 * everything else (a pipe, a file, a log collector).
 */
export function defaultLogFormat(stdoutIsTty: boolean): LogFormat {
  return stdoutIsTty ? 'pretty' : 'json';
}

/**
 * One error for all issues. Only our own messages are used, and the built-in ones zod could add (a
 * non-string value) state the expected type without the value, so no secret can slip in.
 */
export function toConfigError(issues: readonly Pick<z.core.$ZodIssue, 'path' | 'message'>[]): ConfigInvalidError {
  const lines = new Map<string, string>();
  for (const issue of issues) {
    const variable = String(issue.path[0] ?? '(environment)');
    lines.set(`${variable}: ${issue.message}`, variable);
  }
  const variables = [...new Set(lines.values())];
  const message = ['Invalid configuration:', ...[...lines.keys()].map((line) => `  - ${line}`)].join('\n');
  return new ConfigInvalidError(message, { details: { variables } });
}
