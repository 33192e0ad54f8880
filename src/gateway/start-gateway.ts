import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { ResolvedConfig } from '../config/resolved-config.js';
import { SessionQueue } from '../producer/session-queue.js';
import { buildGateway } from './build-gateway.js';

/** A listening gateway and how to stop it. */
export interface RunningGateway {
  app: FastifyInstance;
  /** `http://host:port` it listens on. */
  url: string;
  /** Stops taking requests, ends open streams, then closes the queue, Redis and Postgres. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts `loopfleet gateway`: one Postgres pool and one Redis connection (shared by the queue, the
 * rate limits and the stream reads), the app, listening on `GATEWAY_HOST:GATEWAY_PORT`. A failed
 * start closes what it opened and rejects.
 */
export async function startGateway(client: ResolvedConfig, config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  const pool = new pg.Pool({ connectionString: client.databaseUrl, max: client.worker.poolSize });
  const redis = new Redis(client.redisUrl, { maxRetriesPerRequest: 2 });
  const queue = new SessionQueue({
    pool,
    redis,
    queueName: client.queueName,
    maxInputBytes: client.worker.maxInputBytes,
    statementTimeoutMs: client.worker.statementTimeoutMs,
    events: { maxLen: client.events.maxLen, idleExpirySeconds: client.events.idleExpirySeconds },
    logger: logger.child({ module: 'queue' }),
  });
  let app: FastifyInstance | null = null;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await app?.close();
      await queue.close();
      redis.disconnect();
      await pool.end();
    })();
    return closing;
  };
  try {
    app = await buildGateway({ queue, config, logger, redis, pingDatabase: async () => void (await pool.query('select 1')) });
    const url = await app.listen({ port: config.port, host: config.host });
    logger.info({ url, auth: config.auth.mode }, 'gateway listening');
    return { app, url, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
