import type { FastifyPluginAsync } from 'fastify';
import type { StreamRouteDeps } from '../sse/stream-route-deps.js';

/** `/v1/chat` routes (AI SDK UI message stream): filled in by the chat branch. */
export const chatRoutes: FastifyPluginAsync<StreamRouteDeps> = async () => {};
