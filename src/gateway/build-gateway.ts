import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { SessionQueue } from '../producer/session-queue.js';
import { acceptForCaller } from './accept-for-caller.js';
import { addAuthHook } from './auth/auth-hook.js';
import { createTokenVerifier } from './auth/token-verifier.js';
import { chatRoutes } from './chat/index.js';
import { errorHandler, RateLimitedError } from './errors.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { healthRoutes } from './routes/health-routes.js';
import { restRoutes } from './routes/index.js';
import { requireSession } from './session-access.js';
import { eventRoutes } from './sse/index.js';
import type { StreamRouteDeps } from './sse/stream-route-deps.js';
import { OPENAPI_INFO } from './openapi.js';
import { registerViewer } from './viewer-routes.js';

/** What {@link buildGateway} needs. */
export interface GatewayDeps {
  queue: SessionQueue;
  config: GatewayConfig;
  /** Request logs go here; none when absent. */
  logger?: Logger;
  /**
   * A Redis connection the gateway may read with (event streams, readiness) and keep the shared
   * rate-limit counters on. Without it, limits are per process and the SSE routes are not served.
   */
  redis?: RedisConnection;
  /** The built viewer's folder; default `dist/viewer` of the package. */
  viewerDir?: string;
  /** Told of every route as it is added (Fastify's `onRoute`): the OpenAPI check lists them with it. */
  onRoute?: (route: RouteOptions) => void;
  /** Readiness probe of Postgres; `/readyz` answers 503 when it rejects. */
  pingDatabase?: () => Promise<void>;
}

/**
 * The gateway's Fastify app, not listening yet (docs/gateway.md): auth on every `/v1/` request,
 * JSON errors, CORS by allowlist, rate limits, body limit, the REST routes, SSE and chat, the
 * OpenAPI document and the health and metrics endpoints.
 */
export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config, queue } = deps;
  const app: FastifyInstance = Fastify({
    bodyLimit: config.bodyLimitBytes,
    // pino's Logger is Fastify's logger; its stricter type differs only in fields Fastify never sets.
    ...(deps.logger !== undefined ? { loggerInstance: deps.logger as unknown as FastifyBaseLogger } : { logger: false }),
    // Session ids may hold ':' and '.', and are matched whole.
    routerOptions: { maxParamLength: 256 },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true } },
  });
  if (deps.onRoute !== undefined) app.addHook('onRoute', deps.onRoute);
  const metrics = new GatewayMetrics();
  app.setErrorHandler(errorHandler);
  // Before auth: preflights are answered without a token, and refusals carry the CORS headers a browser needs to read them.
  if (config.corsOrigins.length > 0) {
    await app.register(cors, { origin: config.corsOrigins, exposedHeaders: ['retry-after', 'x-vercel-ai-ui-message-stream'], maxAge: 600 });
  }
  addAuthHook(app, createTokenVerifier(config.auth));
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
  await app.register(rateLimit, {
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    ...(deps.redis !== undefined ? { redis: deps.redis, nameSpace: `${queue.queueName}:gateway-rate:` } : {}),
    keyGenerator: (request) => rateKey(request.principal, request.ip),
    errorResponseBuilder: (_request, context) => new RateLimitedError(`rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}`),
  });
  await app.register(swagger, { openapi: OPENAPI_INFO });
  await app.register(healthRoutes, { metrics, redis: deps.redis, pingDatabase: deps.pingDatabase });
  await app.register(restRoutes, { queue, config, redis: deps.redis });
  if (deps.redis !== undefined) {
    const streamDeps: StreamRouteDeps = {
      queue,
      redis: deps.redis,
      heartbeatMs: config.sseHeartbeatMs,
      requireSession: (request, sessionId, needed) => requireSession(queue, request, sessionId, needed),
      acceptSend: (request, sessionId, data) => acceptForCaller(queue, request, 'send', { sessionId, input: data.input, inputId: data.inputId }),
      onSseOpen: (delta) => metrics.sseOpen(delta),
      onSseEvent: () => metrics.sseEvent(),
    };
    await app.register(eventRoutes, streamDeps);
    await app.register(chatRoutes, streamDeps);
  }
  app.get('/v1/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
  await registerViewer(app, deps.viewerDir);
  return app;
}

/** Rate limits count per caller: the token's tenant and subject, or the client address without a token. */
function rateKey(principal: { tenant: string | null; subject: string | null } | null, ip: string): string {
  if (principal === null || (principal.subject === null && principal.tenant === null)) return `ip:${ip}`;
  return `p:${principal.tenant ?? '*'}:${principal.subject ?? '*'}`;
}
