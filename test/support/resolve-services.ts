import { Redis } from 'ioredis';
import pg from 'pg';

export interface ResolvedServices {
  postgresAdminUrl: string;
  redisUrl: string;
  /** How they were found, for the log line. */
  source: 'env' | 'local' | 'testcontainers';
  stop(): Promise<void>;
}

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

/**
 * Integration tests run against real services. In order: `DATABASE_URL`/`REDIS_URL` from the
 * environment, the local defaults, then containers when a Docker engine is reachable. Otherwise the
 * run fails with instructions instead of silently skipping.
 */
export async function resolveServices(): Promise<ResolvedServices> {
  const envPg = nonEmpty(process.env.TEST_DATABASE_URL) ?? nonEmpty(process.env.DATABASE_URL);
  const envRedis = nonEmpty(process.env.TEST_REDIS_URL) ?? nonEmpty(process.env.REDIS_URL);
  const pgUrl = envPg ?? LOCAL_POSTGRES;
  const redisUrl = envRedis ?? LOCAL_REDIS;
  const [pgProblem, redisProblem] = await Promise.all([probePostgres(pgUrl), probeRedis(redisUrl)]);
  if (pgProblem === null && redisProblem === null) {
    const source = envPg !== undefined || envRedis !== undefined ? 'env' : 'local';
    return { postgresAdminUrl: pgUrl, redisUrl, source, stop: async () => {} };
  }
  const containers = await startContainers().catch((error: unknown) => error as Error);
  if (!(containers instanceof Error)) return containers;
  throw new Error(
    [
      'Integration tests need PostgreSQL and Redis.',
      `  Postgres at ${pgUrl}: ${pgProblem ?? 'ok'}`,
      `  Redis at ${redisUrl}: ${redisProblem ?? 'ok'}`,
      `  testcontainers: ${containers.message}`,
      'Provide them in one of these ways:',
      '  - set DATABASE_URL (a user allowed to CREATE DATABASE) and REDIS_URL;',
      '  - run them locally on 127.0.0.1:5432 (database "test", user "postgres") and 127.0.0.1:6379;',
      '  - or start a Docker engine so testcontainers can run them.',
    ].join('\n'),
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

async function probePostgres(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

async function probeRedis(url: string): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.disconnect();
  }
}

async function startContainers(): Promise<ResolvedServices> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const postgres = await new GenericContainer('postgres:16-alpine')
    .withEnvironment({ POSTGRES_PASSWORD: 'postgres', POSTGRES_DB: 'test' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
  return {
    postgresAdminUrl: `postgres://postgres:postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/test`,
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    source: 'testcontainers',
    stop: async () => {
      await Promise.all([postgres.stop(), redis.stop()]);
    },
  };
}
