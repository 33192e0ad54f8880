import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisConnection } from '../../fleet/redis-connection.js';
import type { GatewayMetrics } from '../gateway-metrics.js';

/** What the health routes check and report. */
export interface HealthRouteDeps {
  metrics: GatewayMetrics;
  redis: RedisConnection | undefined;
  pingDatabase: (() => Promise<void>) | undefined;
}

const READY_TIMEOUT_MS = 2000;
const noLimit = { rateLimit: false } as const;

/** `/healthz` (the process answers), `/readyz` (Postgres and Redis answer) and `/metrics`: no auth, no rate limit. */
export const healthRoutes: FastifyPluginAsync<HealthRouteDeps> = async (app, deps) => {
  app.get(
    '/healthz',
    { config: noLimit, schema: { summary: 'Liveness', tags: ['health'], security: [], response: { 200: statusBody } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    { config: noLimit, schema: { summary: 'Readiness: Postgres and Redis answer', tags: ['health'], security: [], response: { 200: statusBody, 503: statusBody } } },
    async (request, reply) => {
      const checks = await Promise.allSettled([
        within(deps.pingDatabase?.() ?? Promise.resolve()),
        within(deps.redis?.ping().then(() => undefined) ?? Promise.resolve()),
      ]);
      const failed = checks.flatMap((check, index) => (check.status === 'rejected' ? [index === 0 ? 'postgres' : 'redis'] : []));
      if (failed.length === 0) return { status: 'ok' };
      request.log.warn({ failed }, 'not ready');
      return reply.code(503).send({ status: `unavailable: ${failed.join(', ')}` });
    },
  );
  app.get('/metrics', { config: noLimit, schema: { summary: 'Prometheus metrics', tags: ['health'], security: [], produces: ['text/plain'] } }, async (_request, reply) => {
    return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
};

const statusBody = { type: 'object', required: ['status'], properties: { status: { type: 'string' } } } as const;

async function within(work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
