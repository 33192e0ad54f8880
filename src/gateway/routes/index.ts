import type { FastifyPluginAsync } from 'fastify';
import { budgetRoutes } from './budget-routes.js';
import { inputRoutes } from './input-routes.js';
import { meRoutes } from './me-routes.js';
import { readRoutes } from './read-routes.js';
import { sessionRoutes } from './session-routes.js';
import { tenantRoutes } from './tenant-routes.js';
import { usageRoutes } from './usage-routes.js';
import type { RestRouteDeps } from './rest-route-deps.js';

export type { RestRouteDeps } from './rest-route-deps.js';

/** Every JSON route under `/v1` (docs/gateway.md, "Routes"). */
export const restRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, deps) => {
  await app.register(meRoutes);
  await app.register(sessionRoutes, deps);
  await app.register(inputRoutes, deps);
  await app.register(readRoutes, deps);
  await app.register(budgetRoutes, deps);
  await app.register(usageRoutes, deps);
  await app.register(tenantRoutes, deps);
};
