import type { Redis } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type pg from 'pg';
import { loadClientConfig, serverAddress, type ResolvedConfig } from '../config/index.js';
import { InfrastructureError } from '../core/errors/index.js';
import type { ClientStore } from '../core/ports/client-store.js';
import type { AgentRegistry } from '../core/ports/agent-registry.js';
import { guardStore } from '../core/ports/guard-store.js';
import { createPgPool } from '../store/postgres/pool.js';
import { PostgresSessionStore } from '../store/postgres-session-store.js';
import { PostgresAgentRegistry } from '../store/agents/postgres-agent-registry.js';
import type { SessionQueue } from '../producer/session-queue.js';
import { BudgetAdmin } from '../producer/budget-admin.js';
import { TenantAdmin } from '../producer/tenant-admin.js';

/**
 * How long the CLI waits for a first connection to Postgres or Redis before it says which server it
 * could not reach. Its own setting: workers and library clients keep their longer defaults.
 */
export const CLI_CONNECT_TIMEOUT_MS = 3000;

/** What a command that reads or writes only Postgres uses: never a Redis connection, nor BullMQ. */
export interface StoreClient {
  store: ClientStore;
  registry: AgentRegistry;
  budgets: BudgetAdmin;
  tenants: TenantAdmin;
  close(): Promise<void>;
}

/** The configuration the client commands run with (`DATABASE_URL`, `REDIS_URL`, …), validated. */
export function cliConfig(env: NodeJS.ProcessEnv): ResolvedConfig {
  return loadClientConfig(env);
}

/** Opens a pool on `DATABASE_URL` and checks it can connect within {@link CLI_CONNECT_TIMEOUT_MS}. */
export async function openStore(env: NodeJS.ProcessEnv): Promise<StoreClient> {
  const config = cliConfig(env);
  const pool = await openPool(config);
  const store = guardStore(new PostgresSessionStore(pool, { batch: config.worker.batch }));
  const run = <T>(work: () => Promise<T>): Promise<T> => work();
  return {
    store,
    registry: new PostgresAgentRegistry(pool),
    budgets: new BudgetAdmin({ store, run }),
    tenants: new TenantAdmin({ store, run }),
    close: () => pool.end(),
  };
}

/**
 * A {@link SessionQueue} on connections the CLI opened and checked first (Postgres, then Redis),
 * each within {@link CLI_CONNECT_TIMEOUT_MS}; `close` ends the queue and then them. The queue's
 * module loads here, so the commands that never need Redis never load BullMQ.
 */
export async function openQueue(env: NodeJS.ProcessEnv): Promise<{ queue: SessionQueue; redis: RedisConnection; close(): Promise<void> }> {
  const config = cliConfig(env);
  const { SessionQueue, clientQueueOptions } = await import('../producer/session-queue.js');
  // As SessionQueue.fromEnv does: with OTEL_TRACES_EXPORTER set, the adds are traced (docs/tracing.md).
  const { startTracing } = await import('../observability/tracing/start-tracing.js');
  const tracing = await startTracing(env, { serviceName: 'loopfleet-client' });
  let pool: pg.Pool | null = null;
  let redis: RedisConnection;
  try {
    pool = await openPool(config);
    redis = await connectRedis(config);
  } catch (error) {
    await pool?.end();
    await tracing.shutdown();
    throw error;
  }
  const opened = pool;
  const queue = new SessionQueue(Object.assign({}, clientQueueOptions(config), { pool: opened, redis }));
  return {
    queue,
    redis,
    close: async () => {
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
      await opened.end();
      await tracing.shutdown();
    },
  };
}

async function openPool(config: ResolvedConfig): Promise<pg.Pool> {
  const pool = createPgPool(config.databaseUrl, {
    applicationName: 'loopfleet-cli',
    maxConnections: config.worker.poolSize,
    pooler: config.worker.pooler,
    statementTimeoutMs: config.worker.statementTimeoutMs,
    connectionTimeoutMs: CLI_CONNECT_TIMEOUT_MS,
  });
  try {
    // The connection goes back to the pool: the command's first query uses it, so this costs nothing.
    (await pool.connect()).release();
    return pool;
  } catch (error) {
    await pool.end().catch(() => {});
    throw unreachable('Postgres', serverAddress(config.databaseUrl, 5432), error);
  }
}

/** A Redis connection that is ready, or a typed error naming host and port within the timeout. */
async function connectRedis(config: ResolvedConfig): Promise<RedisConnection> {
  // Loaded here: the commands that only read Postgres never load the Redis driver.
  const { openRedis, redisTarget } = await import('../fleet/redis-connection.js');
  const url = config.redisUrl;
  const redis = openRedis(redisTarget(config), { lazyConnect: true, connectTimeout: CLI_CONNECT_TIMEOUT_MS });
  let lastError: unknown = null;
  redis.on('error', (error: unknown) => {
    lastError = error;
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CLI_CONNECT_TIMEOUT_MS / 1000} s`)), CLI_CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([redis.connect(), deadline]);
    return redis;
  } catch (error) {
    redis.disconnect();
    throw unreachable('Redis', serverAddress(url, 6379), lastError ?? error);
  } finally {
    clearTimeout(timer);
  }
}

export { serverAddress } from '../config/index.js';

function unreachable(server: string, address: string, cause: unknown): InfrastructureError {
  const reason = cause instanceof Error && cause.message !== '' ? cause.message : String(cause);
  return new InfrastructureError(`cannot reach ${server} at ${address}: ${reason}`, { cause, details: { server, address } });
}

/** Runs `work` on a {@link StoreClient} and closes it, whatever happens. */
export async function withStore<T>(io: { env: NodeJS.ProcessEnv }, work: (client: StoreClient) => Promise<T>): Promise<T> {
  const client = await openStore(io.env);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

/** Runs `work` on a checked {@link SessionQueue} and closes it and its connections, whatever happens. */
export async function withQueue<T>(io: { env: NodeJS.ProcessEnv }, work: (queue: SessionQueue, redis: RedisConnection) => Promise<T>): Promise<T> {
  const opened = await openQueue(io.env);
  try {
    return await work(opened.queue, opened.redis);
  } finally {
    await opened.close();
  }
}
