import type { FastifyInstance } from 'fastify';
import { openRedis, redisTarget } from '../fleet/redis-connection.js';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { ResolvedConfig } from '../config/resolved-config.js';
import { clientQueueOptions, SessionQueue } from '../producer/session-queue.js';
import { buildGateway } from './build-gateway.js';
import { watchConnection } from '../observability/connection-trouble.js';
import { serverAddress } from '../config/redact-url.js';

/** A listening gateway and how to stop it. */
export interface RunningGateway {
  app: FastifyInstance;
  /** `http://host:port` it listens on. */
  url: string;
  /** Stops taking requests, ends open streams, then closes the queue, Redis and Postgres. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts `loopfleet gateway`: a queue with its Postgres pool, and one Redis connection shared by the
 * queue, the rate limits and the stream reads; the app, listening on `GATEWAY_HOST:GATEWAY_PORT`. A failed
 * start closes what it opened and rejects.
 */
export async function startGateway(client: ResolvedConfig, config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  const redis = openRedis(redisTarget(client), { maxRetriesPerRequest: 2 });
  watchConnection(redis, logger, { component: 'gateway.redis', address: serverAddress(client.redisUrl, 6379) });
  let queue: SessionQueue | null = null;
  let app: FastifyInstance | null = null;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await app?.close();
      await queue?.close();
      redis.disconnect();
    })();
    return closing;
  };
  try {
    // The connection is the gateway's, shared with its routes; the queue opens its own pool.
    queue = new SessionQueue(Object.assign(clientQueueOptions(client), { redis, logger: logger.child({ module: 'queue' }) }));
    const probe = queue;
    // A primary-key read of an id no session has: Postgres answers, or readiness fails.
    const pingDatabase = async (): Promise<void> => void (await probe.sessions.get(READINESS_PROBE_ID));
    app = await buildGateway({ queue, config, logger, redis, pingDatabase });
    const url = await app.listen({ port: config.port, host: config.host });
    logger.info({ url, auth: config.auth.mode }, 'gateway listening');
    return { app, url, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

const READINESS_PROBE_ID = 'loopfleet-gateway-readiness-probe';
