import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import type { GatewayConfig } from '../../config/gateway-config.js';
import type { SessionQueue } from '../../producer/session-queue.js';
import { inputRoutes } from './input-routes.js';
import { meRoutes } from './me-routes.js';
import { readRoutes } from './read-routes.js';
import { sessionRoutes } from './session-routes.js';

/** What the REST routes share. */
export interface RestRouteDeps {
  queue: SessionQueue;
  config: GatewayConfig;
  /** For the session view's event cursor; the cursor is null without it. */
  redis: Redis | undefined;
}

/** Every JSON route under `/v1` (docs/gateway.md, "Routes"). */
export const restRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, deps) => {
  await app.register(meRoutes);
  await app.register(sessionRoutes, deps);
  await app.register(inputRoutes, deps);
  await app.register(readRoutes, deps);
};
