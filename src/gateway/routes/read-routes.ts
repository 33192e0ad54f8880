import type { FastifyPluginAsync } from 'fastify';
import { errorResponses } from '../openapi.js';
import { requireSession } from '../session-access.js';
import type { RestRouteDeps } from './rest-route-deps.js';
import { agentSchema, childSchema, inputCountsSchema, messageSchema, sessionIdParams, statsSchema, timerSchema } from './schemas.js';

const HISTORY_PAGE = 200;

/** History, stats, children, timers and the fleet's agents. */
export const readRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, { queue }) => {
  app.get<{ Params: { id: string }; Querystring: { afterSeq?: number; limit?: number; includeCompacted?: boolean } }>(
    '/v1/sessions/:id/history',
    {
      schema: {
        summary: "The session's messages in seq order, a page at a time",
        tags: ['sessions'],
        params: sessionIdParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            afterSeq: { type: 'integer', minimum: 0, description: 'Message seq to start after' },
            limit: { type: 'integer', minimum: 1, maximum: 10_000, default: HISTORY_PAGE },
            includeCompacted: { type: 'boolean', default: false },
          },
        },
        response: Object.assign(
          {
            200: {
              type: 'object',
              required: ['messages', 'nextAfterSeq'],
              properties: { messages: { type: 'array', items: messageSchema }, nextAfterSeq: { type: 'integer', nullable: true, description: 'afterSeq of the next page; null on the last' } },
            },
          },
          errorResponses,
        ),
      },
    },
    async (request) => {
      const session = await requireSession(queue, request, request.params.id, 'read');
      const { afterSeq = 0, limit = HISTORY_PAGE, includeCompacted = false } = request.query;
      const messages = await queue.history(session.id, { afterSeq, limit, includeCompacted });
      const last = messages[messages.length - 1];
      return { messages, nextAfterSeq: messages.length === limit && last !== undefined ? last.seq : null };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/stats',
    {
      schema: {
        summary: 'Cumulative stats, inputs by status, and the session tree',
        tags: ['sessions'],
        params: sessionIdParams,
        response: Object.assign(
          { 200: { type: 'object', properties: { sessionId: { type: 'string' }, agent: { type: 'string' }, status: { type: 'string' }, totals: statsSchema, inputs: inputCountsSchema, tree: { type: 'object', additionalProperties: true } } } },
          errorResponses,
        ),
      },
    },
    async (request) => queue.stats((await requireSession(queue, request, request.params.id, 'read')).id),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/children',
    { schema: { summary: 'Child sessions in spawn order', tags: ['sessions'], params: sessionIdParams, response: Object.assign({ 200: { type: 'object', properties: { children: { type: 'array', items: childSchema } } } }, errorResponses) } },
    async (request) => ({ children: await queue.sessions.children((await requireSession(queue, request, request.params.id, 'read')).id) }),
  );

  app.get<{ Params: { id: string }; Querystring: { all?: boolean } }>(
    '/v1/sessions/:id/timers',
    {
      schema: {
        summary: "The session's timers (armed ones; ?all=true for every one)",
        tags: ['sessions'],
        params: sessionIdParams,
        querystring: { type: 'object', additionalProperties: false, properties: { all: { type: 'boolean', default: false } } },
        response: Object.assign({ 200: { type: 'object', properties: { timers: { type: 'array', items: timerSchema } } } }, errorResponses),
      },
    },
    async (request) => {
      const session = await requireSession(queue, request, request.params.id, 'read');
      return { timers: await queue.timers.list(session.id, { all: request.query.all === true }) };
    },
  );

  app.get(
    '/v1/agents',
    { schema: { summary: 'The agents the fleet serves, with their workers', tags: ['agents'], response: Object.assign({ 200: { type: 'object', properties: { agents: { type: 'array', items: agentSchema } } } }, errorResponses) } },
    async () => ({ agents: await queue.agents() }),
  );
};
