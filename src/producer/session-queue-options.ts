import { Cluster } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type pg from 'pg';
import type { Logger } from 'pino';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '../config/env-schema.js';
import type { ResolvedConfig } from '../config/resolved-config.js';
import { REDIS_DATABASE_PATH, redisNodes, url as urlRule } from '../config/env-variable.js';
import type { RedisNodeAddress } from '../fleet/redis-connection.js';
import { MAX_QUEUE_SHARDS } from '../fleet/redis-layout.js';
import { ConfigInvalidError } from '../core/errors/index.js';
import { MAX_TIMER_MS } from '../core/ports/clock.js';
import { QUEUE_RULE } from '../fleet/queue-name.js';
import { DATABASE_POOLERS, hasStoreTypes, type DatabasePooler } from '../store/postgres/pool.js';

/**
 * Options of {@link SessionQueue}. Connections are either given (`pool`, `redis`: the caller keeps
 * owning them and closes them) or created from URLs (the queue owns and closes those).
 */
export interface SessionQueueOptions {
  /** Postgres connection string. Ignored when `pool` is given. Default `postgres://postgres:postgres@127.0.0.1:5432/loopfleet`. */
  databaseUrl?: string;
  /**
   * A pool to use instead of opening one; never ended by `close()`. It must come from `createPgPool`
   * (exported by loopfleet): the store needs its parsers (`bigint` as numbers). `config.invalid` otherwise.
   */
  pool?: pg.Pool;
  /** Redis connection string. Ignored when `redis` is given. Default `redis://127.0.0.1:6379`. */
  redisUrl?: string;
  /**
   * The nodes of a Redis Cluster to start from (`REDIS_CLUSTER_NODES`): `host:port` text, comma
   * separated, or a list of `{ host, port }`. Set, Redis is that cluster and `redisUrl` gives only the
   * user, password and scheme (docs/redis-cluster.md). Ignored when `redis` is given. Default: one node.
   */
  redisClusterNodes?: string | readonly RedisNodeAddress[] | null;
  /** A Redis connection (an ioredis `Redis` or `Cluster`) to use instead of opening one; never quit by `close()`. */
  redis?: RedisConnection;
  /**
   * The BullMQ queues dispatch is spread over on a cluster (`LOOPFLEET_QUEUE_SHARDS`): set it as the
   * workers do. 1–256; more than 1 needs a cluster. Default 1.
   */
  queueShards?: number;
  /** Most connections the queue's own pool opens (`DATABASE_POOL_SIZE`). Ignored when `pool` is given. Default 10. */
  poolSize?: number;
  /**
   * What stands between the queue's own pool and Postgres (`DATABASE_POOLER`; `createPgPool`'s
   * `pooler`): `none`, `session` or `transaction` (docs/postgres-pooling.md). Ignored when `pool` is given. Default `none`.
   */
  pooler?: DatabasePooler;
  /**
   * Longest one statement of the queue's own pool may run, in milliseconds
   * (`DATABASE_STATEMENT_TIMEOUT_MS`; `createPgPool`'s `statementTimeoutMs`): past it the server
   * cancels the statement, and a connection that never answers is given up a second later instead
   * of holding the accepts queued behind it. 1,000–3,600,000. Ignored when `pool` is given. Default 30,000.
   */
  statementTimeoutMs?: number;
  /**
   * Group commit of the accepts (`DATABASE_BATCH_SIZE`, `DATABASE_BATCH_STATEMENTS`): most accepts
   * of different sessions one statement carries (1 turns batching off), and most such statements
   * running at once. Defaults 64 and 2.
   */
  batch?: { maxSize?: number; maxInFlight?: number };
  /**
   * The session streams' retention, as the workers keep it (`LOOPFLEET_EVENTS_MAXLEN`,
   * `LOOPFLEET_EVENTS_TTL_SECONDS`): each `input_accepted` write trims its stream to about `maxLen`
   * entries and pushes its expiry back to `idleExpirySeconds`, so these must match the workers'.
   * Defaults 10,000 entries and 604,800 s (7 days).
   */
  events?: { maxLen?: number; idleExpirySeconds?: number };
  /** The BullMQ queue name the workers consume (`LOOPFLEET_QUEUE`). Default `loopfleet`. */
  queueName?: string;
  /** Largest accepted input payload, in bytes of its UTF-8 JSON text. Default 1,048,576 (1 MiB). */
  maxInputBytes?: number;
  /**
   * Fair dispatch between tenants (`FAIR_DISPATCH`, docs/fair-dispatch.md): a kick gives its drain a
   * priority from the session's place in its tenant's line. Set it as the workers do. Default true.
   */
  fairDispatch?: boolean;
  /**
   * Longest wait for Redis work that must not hold the caller up, in milliseconds: after an `add`
   * commits, its `input_accepted` event and drain kick (the input is already durable, and the sweeper
   * kicks it if the kick never lands); the live signal of `cancel`; removing a deleted session's
   * stream; flushing on `close`. A reconnecting Redis client queues commands instead of failing them,
   * so without a bound these would hang while Redis is down. Default 2,000.
   */
  redisTimeoutMs?: number;
  /**
   * While `result()` or `handle.events()` waits on the event stream, how often it also re-reads the
   * input from Postgres, in milliseconds (the stream may have lost the event). Default 2,000.
   */
  recheckMs?: number;
  /** pino logger for warnings (a failed kick, a lost stream). Default: none, nothing is logged. */
  logger?: Logger;
}

/** {@link SessionQueueOptions} validated, with defaults filled in. */
export interface ResolvedQueueOptions {
  databaseUrl: string;
  pool: pg.Pool | null;
  redisUrl: string;
  redis: RedisConnection | null;
  redisClusterNodes: RedisNodeAddress[] | null;
  queueShards: number;
  poolSize: number;
  pooler: DatabasePooler;
  statementTimeoutMs: number;
  batch: { maxSize: number; maxInFlight: number };
  events: { maxLen: number; idleExpirySeconds: number };
  queueName: string;
  maxInputBytes: number;
  fairDispatch: boolean;
  redisTimeoutMs: number;
  recheckMs: number;
  logger: Logger | null;
}

/** Defaults of {@link SessionQueueOptions}. */
export const SESSION_QUEUE_DEFAULTS = {
  poolSize: 10,
  statementTimeoutMs: 30_000,
  batch: { maxSize: 64, maxInFlight: 2 },
  events: { maxLen: 10_000, idleExpirySeconds: 604_800 },
  queueName: 'loopfleet',
  maxInputBytes: 1_048_576,
  redisTimeoutMs: 2_000,
  recheckMs: 2_000,
} as const;

/** Validates once, at construction; throws `config.invalid` naming the option. */
export function resolveSessionQueueOptions(options: SessionQueueOptions): ResolvedQueueOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigInvalidError('SessionQueue: options must be an object');
  const d = SESSION_QUEUE_DEFAULTS;
  const queueName = options.queueName ?? d.queueName;
  if (typeof queueName !== 'string' || !QUEUE_RULE.test(queueName)) {
    throw invalid('queueName', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-" (no ":")');
  }
  const batch = group('batch', options.batch);
  const events = group('events', options.events);
  return {
    databaseUrl: options.pool === undefined ? url('databaseUrl', options.databaseUrl ?? DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']) : '',
    pool: options.pool === undefined ? null : storePool(options.pool),
    redisUrl: options.redis === undefined ? url('redisUrl', options.redisUrl ?? DEFAULT_REDIS_URL, ['redis:', 'rediss:'], REDIS_DATABASE_PATH) : '',
    redis: options.redis ?? null,
    redisClusterNodes: options.redis === undefined ? clusterNodes(options.redisClusterNodes ?? null) : null,
    queueShards: shards(options),
    poolSize: positiveInteger('poolSize', options.poolSize ?? d.poolSize),
    pooler: pooler(options.pooler ?? 'none'),
    statementTimeoutMs: statementTimeout(options.statementTimeoutMs ?? d.statementTimeoutMs),
    batch: {
      maxSize: positiveInteger('batch.maxSize', batch.maxSize ?? d.batch.maxSize),
      maxInFlight: positiveInteger('batch.maxInFlight', batch.maxInFlight ?? d.batch.maxInFlight),
    },
    events: {
      maxLen: positiveInteger('events.maxLen', events.maxLen ?? d.events.maxLen),
      idleExpirySeconds: positiveInteger('events.idleExpirySeconds', events.idleExpirySeconds ?? d.events.idleExpirySeconds),
    },
    queueName,
    maxInputBytes: positiveInteger('maxInputBytes', options.maxInputBytes ?? d.maxInputBytes),
    fairDispatch: flag('fairDispatch', options.fairDispatch ?? true),
    redisTimeoutMs: milliseconds('redisTimeoutMs', options.redisTimeoutMs ?? d.redisTimeoutMs),
    recheckMs: milliseconds('recheckMs', options.recheckMs ?? d.recheckMs),
    logger: options.logger ?? null,
  };
}

function clusterNodes(value: unknown): RedisNodeAddress[] | null {
  if (value === null) return null;
  // A list is written out as the text form (an IPv6 host in brackets) and checked by the same rule.
  const host = (node: Partial<RedisNodeAddress> | null): string => {
    const given = node?.host;
    if (typeof given !== 'string' || given === '') throw invalid('redisClusterNodes', 'must list nodes with a host (text) and a port');
    return given.includes(':') && !given.startsWith('[') ? `[${given}]` : given;
  };
  const text = Array.isArray(value) ? value.map((node: Partial<RedisNodeAddress> | null) => `${host(node)}:${String(node?.port)}`).join(',') : value;
  if (typeof text !== 'string') throw invalid('redisClusterNodes', 'must be "host:port,…" text or a list of { host, port }');
  const outcome = redisNodes(text);
  if (!outcome.ok) throw invalid('redisClusterNodes', outcome.message);
  return outcome.value;
}

/** `queueShards`: more than 1 only on a cluster (nodes given, or a `Cluster` connection). */
function shards(options: SessionQueueOptions): number {
  const value = options.queueShards ?? 1;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_QUEUE_SHARDS) throw invalid('queueShards', `must be an integer from 1 to ${MAX_QUEUE_SHARDS}`);
  const cluster = options.redis !== undefined ? options.redis instanceof Cluster : options.redisClusterNodes != null;
  if (value > 1 && !cluster) throw invalid('queueShards', 'more than 1 shard needs a Redis Cluster (redisClusterNodes, or a Cluster as redis)');
  return value;
}

function pooler(value: unknown): DatabasePooler {
  if (typeof value === 'string' && (DATABASE_POOLERS as readonly string[]).includes(value)) return value as DatabasePooler;
  throw invalid('pooler', `must be one of ${DATABASE_POOLERS.join(', ')}, got ${String(value)}`);
}

function storePool(pool: unknown): pg.Pool {
  if (typeof pool !== 'object' || pool === null || !hasStoreTypes(pool as pg.Pool)) {
    throw invalid('pool', "must be a pool made by createPgPool (import { createPgPool } from 'loopfleet'): a plain pg.Pool returns bigint columns as strings, which the store refuses");
  }
  return pool as pg.Pool;
}

/** Checked by the rule `DATABASE_URL` and `REDIS_URL` are (`src/config/env-variable.ts`): the same messages, the password masked. */
function url(option: string, value: unknown, protocols: string[], path?: { pattern: RegExp; expected: string }): string {
  if (typeof value !== 'string') throw invalid(option, 'must be a string');
  const outcome = urlRule(protocols, path)(value);
  if (!outcome.ok) throw invalid(option, outcome.message);
  return value;
}

/** An optional group of options: absent, or an object. */
function group<T extends object>(option: string, value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(option, 'must be an object');
  return value;
}

function positiveInteger(option: string, value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw invalid(option, `must be a positive integer, got ${String(value)}`);
}

/** A delay for Node's timers: a positive integer they honour (a longer one would fire at once). */
function milliseconds(option: string, value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= MAX_TIMER_MS) return value;
  throw invalid(option, `must be an integer from 1 to ${MAX_TIMER_MS} (milliseconds), got ${String(value)}`);
}

/** As `DATABASE_STATEMENT_TIMEOUT_MS` allows: 1 s to 1 h, or 0 for none (behind a PgBouncer that refuses the setting). */
function statementTimeout(value: unknown): number {
  if (value === 0 || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1000 && value <= 3_600_000)) return value;
  throw invalid('statementTimeoutMs', `must be 0 (none) or an integer from 1000 to 3600000 (milliseconds), got ${String(value)}`);
}

function invalid(option: string, problem: string): ConfigInvalidError {
  return new ConfigInvalidError(`SessionQueue: ${option} ${problem}`, { details: { option } });
}

function flag(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalid(name, 'must be true or false');
  return value;
}

/** The queue options a client configuration (`loadClientConfig`) sets: where Postgres and Redis are, the queue, limits, pool and retention. */
export function clientQueueOptions(config: ResolvedConfig): SessionQueueOptions {
  return {
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    redisClusterNodes: config.redisClusterNodes,
    queueName: config.queueName,
    queueShards: config.queueShards,
    maxInputBytes: config.worker.maxInputBytes,
    fairDispatch: config.fairDispatch,
    poolSize: config.worker.poolSize,
    pooler: config.worker.pooler,
    statementTimeoutMs: config.worker.statementTimeoutMs,
    batch: { maxSize: config.worker.batch.maxSize, maxInFlight: config.worker.batch.maxInFlight },
    events: { maxLen: config.events.maxLen, idleExpirySeconds: config.events.idleExpirySeconds },
  };
}
