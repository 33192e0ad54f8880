import type { FastifyPluginAsync } from 'fastify';
import type { StreamRouteDeps } from './stream-route-deps.js';

/** `GET /v1/sessions/:id/events` (SSE): filled in by the chat branch. */
export const eventRoutes: FastifyPluginAsync<StreamRouteDeps> = async () => {};
