import { z } from 'zod';
// No millisecond setting may exceed it: Node's timers fire at once past it.
import { MAX_TIMER_MS } from '../core/ports/clock.js';
import { envVariable, flag, integer, matching, oneOf, REDIS_DATABASE_PATH, redisNodes, text, url, zeroOr } from './env-variable.js';
import type { RedisNodeAddress } from '../fleet/redis-connection.js';
import { MAX_QUEUE_SHARDS } from '../fleet/redis-layout.js';
import { KEY_FILE_VARIABLES } from './key-files.js';
import { QUEUE_RULE } from '../fleet/queue-name.js';
import { DATABASE_POOLERS, LLM_PROVIDERS, LOG_FORMATS, LOG_LEVELS, LLM_HTTP_CLIENTS, type DatabasePooler, type LlmProviderName, type LlmHttpClient, type LogFormat } from './resolved-config.js';

/** Defaults match `docker-compose.yml` and README's "Configuration" table. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres:postgres@127.0.0.1:5432/loopfleet';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** The key variable each hosted provider cannot work without. */
export const API_KEY_VARIABLE = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  scripted: null,
} as const satisfies Record<LlmProviderName, string | null>;

const httpUrl = envVariable<string | null>(null, url(['http:', 'https:']));
const secret = envVariable<string | null>(null, text);

/** Every variable that stands on its own: its value does not depend on another variable. */
const independentSchema = z.object({
  DATABASE_URL: envVariable(DEFAULT_DATABASE_URL, url(['postgres:', 'postgresql:'])),
  REDIS_URL: envVariable(DEFAULT_REDIS_URL, url(['redis:', 'rediss:'], REDIS_DATABASE_PATH)),
  LOOPFLEET_QUEUE: envVariable(
    'loopfleet',
    // BullMQ rejects ":" in queue names, and the name becomes part of every Redis key.
    matching(QUEUE_RULE, '1 to 64 characters of A-Z, a-z, 0-9, "_" or "-" (no ":")'),
  ),
  LLM_MODEL: envVariable<string | null>(null, text),
  OPENAI_BASE_URL: httpUrl,
  ANTHROPIC_BASE_URL: httpUrl,
  LLM_HTTP_CLIENT: envVariable<LlmHttpClient>('node', oneOf(LLM_HTTP_CLIENTS)),
  OPENAI_PROMPT_CACHE_KEY: envVariable(true, flag),
  LLM_REQUEST_TIMEOUT_MS: envVariable(
    120_000,
    integer({ min: 1, max: MAX_TIMER_MS, expected: 'a positive integer (milliseconds)' }),
  ),
  WORKER_CONCURRENCY: envVariable(16, integer({ min: 1, max: 10_000, expected: 'a positive integer' })),
  WORKER_HEAP_GROWTH_PERCENT: envVariable(100, integer({ min: 0, max: 1000, expected: 'an integer from 0 to 1000 (percent; 0 leaves V8 its own)' })),
  DATABASE_POOL_SIZE: envVariable(10, integer({ min: 1, max: 1000, expected: 'a positive integer' })),
  DATABASE_POOLER: envVariable<DatabasePooler>('none', oneOf(DATABASE_POOLERS)),
  DATABASE_BATCH_SIZE: envVariable(64, integer({ min: 1, max: 1000, expected: 'an integer from 1 to 1000 (writes per statement)' })),
  DATABASE_BATCH_STATEMENTS: envVariable(2, integer({ min: 1, max: 1000, expected: 'an integer from 1 to 1000 (batched statements at once)' })),
  DATABASE_BATCH_OVERLAP_MIN: envVariable(16, integer({ min: 1, max: 100_000, expected: 'an integer from 1 to 100000 (writes or reads waiting)' })),
  DATABASE_STATEMENT_TIMEOUT_MS: envVariable(
    30_000,
    zeroOr(integer({ min: 1000, max: 3_600_000, expected: '0 (none) or an integer from 1000 to 3600000 (milliseconds)' })),
  ),
  METRICS_PORT: envVariable(9464, integer({ min: 0, max: 65_535, expected: 'an integer from 0 to 65535' })),
  METRICS_TENANT_LABEL: envVariable(false, flag),
  LOG_LEVEL: envVariable('info', oneOf(LOG_LEVELS)),
  // Unset: chosen by whether standard output is a terminal (defaultLogFormat).
  LOG_FORMAT: envVariable<LogFormat | null>(null, oneOf(LOG_FORMATS)),
  LOG_CONTENT: envVariable(false, flag),
  LOOPFLEET_TOOLS: envVariable<string | null>(null, text),
  LOOPFLEET_AGENTS: envVariable<string | null>(null, text),
  LOOPFLEET_HOOKS: envVariable<string | null>(null, text),
  LOOPFLEET_AGENT_TIMERS: envVariable(false, flag),
  FAIR_DISPATCH: envVariable(true, flag),
  LOOPFLEET_PRICES: envVariable<string | null>(null, text),
  LOOPFLEET_MAX_INPUT_BYTES: envVariable(
    1_048_576,
    integer({ min: 1, max: Number.MAX_SAFE_INTEGER, expected: 'a positive integer (bytes)' }),
  ),
  LOOPFLEET_EVENTS_MAXLEN: envVariable(10_000, integer({ min: 10, max: 10_000_000, expected: 'an integer of at least 10 (entries per session stream)' })),
  LOOPFLEET_EVENTS_TTL_SECONDS: envVariable(604_800, integer({ min: 60, max: 315_360_000, expected: 'an integer of at least 60 (seconds)' })),
  LOOPFLEET_EVENTS_COALESCE_MS: envVariable(25, integer({ min: 0, max: 10_000, expected: 'an integer from 0 to 10000 (milliseconds)' })),
  LEASE_TTL_MS: envVariable(
    30_000,
    integer({ min: 1000, max: MAX_TIMER_MS, expected: 'an integer of at least 1000 (milliseconds)' }),
  ),
  // Below 5 s, a lock renewed every quarter of it is lost to an ordinary Redis or event-loop hiccup.
  WORKER_JOB_LOCK_MS: envVariable(10_000, integer({ min: 5_000, max: 600_000, expected: 'an integer from 5000 to 600000 (milliseconds)' })),
  DRAIN_SLICE_INPUTS: envVariable(10, integer({ min: 1, max: 1_000_000, expected: 'a positive integer (inputs)' })),
  DRAIN_SLICE_MS: envVariable(30_000, integer({ min: 1, max: MAX_TIMER_MS, expected: 'a positive integer (milliseconds)' })),
  SWEEP_EVERY_MS: envVariable(5_000, integer({ min: 100, max: MAX_TIMER_MS, expected: 'an integer of at least 100 (milliseconds)' })),
  SWEEP_GRACE_MS: envVariable(2_000, integer({ min: 0, max: MAX_TIMER_MS, expected: 'a non-negative integer (milliseconds)' })),
  WINDOW_CACHE_MB: envVariable(64, integer({ min: 0, max: 1_048_576, expected: 'a non-negative integer (MiB; 0 turns the window cache off)' })),
  WINDOW_CACHE_MIN_MESSAGES: envVariable(1, integer({ min: 1, max: 10_000_000, expected: 'a positive integer (messages)' })),
  MAX_INPUT_ATTEMPTS: envVariable(10, integer({ min: 1, max: 1000, expected: 'an integer from 1 to 1000 (starts of one input)' })),
  WORKER_BLOCKED_EXIT_MS: envVariable(
    30_000,
    zeroOr(integer({ min: 1000, max: MAX_TIMER_MS, expected: '0 (off) or an integer of at least 1000 (milliseconds)' })),
  ),
});

/**
 * The provider and its keys, resolved together: an unset `LLM_PROVIDER` is inferred from which key is
 * present, and a hosted provider without its key is an error reported against the key variable.
 */
const providerVariables = z.object({
  LLM_PROVIDER: envVariable<LlmProviderName | null>(null, oneOf(LLM_PROVIDERS)),
  OPENAI_API_KEY: secret,
  ANTHROPIC_API_KEY: secret,
  LLM_FALLBACK: envVariable<string | null>(null, text),
});

const providerSchema = providerVariables.transform((env, ctx) => {
  const provider = env.LLM_PROVIDER ?? inferProvider(env.OPENAI_API_KEY, env.ANTHROPIC_API_KEY);
  const keyVariable = API_KEY_VARIABLE[provider];
  if (keyVariable !== null && env[keyVariable] === null) {
    ctx.addIssue({
      code: 'custom',
      path: [keyVariable],
      message: `required when LLM_PROVIDER=${provider} (set ${keyVariable}, or choose another LLM_PROVIDER)`,
    });
    return z.NEVER;
  }
  const fallback = parseFallback(env.LLM_FALLBACK, env, ctx);
  return Object.assign({}, env, { LLM_PROVIDER: provider, LLM_FALLBACK: fallback });
});

/**
 * `LLM_FALLBACK`: comma-separated `provider:model` pairs tried after the primary, in order, e.g.
 * `anthropic:claude-sonnet-4-5,openai:gpt-4o-mini`. Each hosted provider needs its key.
 */
function parseFallback(
  value: string | null,
  keys: { OPENAI_API_KEY: string | null; ANTHROPIC_API_KEY: string | null },
  ctx: z.RefinementCtx,
): { provider: LlmProviderName; model: string }[] {
  if (value === null) return [];
  const pairs: { provider: LlmProviderName; model: string }[] = [];
  for (const entry of value.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const separator = entry.indexOf(':');
    const provider = entry.slice(0, separator) as LlmProviderName;
    const model = entry.slice(separator + 1);
    if (separator <= 0 || model === '' || !LLM_PROVIDERS.includes(provider)) {
      ctx.addIssue({ code: 'custom', path: ['LLM_FALLBACK'], message: `"${entry}" is not provider:model with provider one of ${LLM_PROVIDERS.join(', ')}` });
      continue;
    }
    const keyVariable = API_KEY_VARIABLE[provider];
    if (keyVariable !== null && keys[keyVariable] === null) {
      ctx.addIssue({ code: 'custom', path: ['LLM_FALLBACK'], message: `"${entry}" needs ${keyVariable}` });
      continue;
    }
    pairs.push({ provider, model });
  }
  return pairs;
}

function inferProvider(openaiKey: string | null, anthropicKey: string | null): LlmProviderName {
  if (openaiKey !== null) return 'openai';
  if (anthropicKey !== null) return 'anthropic';
  return 'scripted';
}

/** Where Redis is when it is a cluster, and how many queues dispatch is spread over there (docs/redis-cluster.md). */
const redisVariables = z.object({
  REDIS_CLUSTER_NODES: envVariable<RedisNodeAddress[] | null>(null, redisNodes),
  LOOPFLEET_QUEUE_SHARDS: envVariable(1, integer({ min: 1, max: MAX_QUEUE_SHARDS, expected: `an integer from 1 to ${MAX_QUEUE_SHARDS}` })),
});

const redisSchema = redisVariables.transform((env, ctx) => {
  if (env.LOOPFLEET_QUEUE_SHARDS > 1 && env.REDIS_CLUSTER_NODES === null) {
    ctx.addIssue({ code: 'custom', path: ['LOOPFLEET_QUEUE_SHARDS'], message: 'more than 1 shard needs a Redis Cluster (set REDIS_CLUSTER_NODES)' });
    return z.NEVER;
  }
  return env;
});

/**
 * The schema of the raw environment: every loopfleet variable, typed, defaulted and checked. An
 * intersection rather than one object with a refinement, because zod skips an object's refinements
 * once any field has failed, and a missing API key must be reported alongside every other problem.
 * Unknown variables are ignored.
 */
export const envSchema = z.intersection(z.intersection(independentSchema, providerSchema), redisSchema);

/** The name of every variable loopfleet reads (the compose file forwards each to its workers). */
export const CONFIG_VARIABLES: readonly string[] = [
  ...Object.keys(independentSchema.shape),
  ...Object.keys(providerVariables.shape),
  ...Object.keys(redisVariables.shape),
  ...Object.values(KEY_FILE_VARIABLES),
];

/** The environment after validation: every variable present, with its default applied. */
export type ParsedEnv = z.output<typeof envSchema>;
