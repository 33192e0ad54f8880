import type { FastifyPluginAsync } from 'fastify';
import type { GatewayConfig } from '../../config/gateway-config.js';
import type { SessionQueue } from '../../producer/session-queue.js';
import { meRoutes } from './me-routes.js';

/** What the REST routes share. */
export interface RestRouteDeps {
  queue: SessionQueue;
  config: GatewayConfig;
}

/** Every JSON route under `/v1` (docs/gateway.md, "Routes"). */
export const restRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, deps) => {
  await app.register(meRoutes, deps);
};
