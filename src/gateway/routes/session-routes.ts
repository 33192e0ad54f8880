import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { CreateSessionParams } from '../../core/ports/store-records.js';
import type { SessionStatus } from '../../core/session-types.js';
import { SessionNotFoundError } from '../../core/errors/index.js';
import { conflictResponse, errorResponses } from '../openapi.js';
import { listForCaller } from '../session-listing.js';
import { assertMayTouch, requireSession } from '../session-access.js';
import { sessionView } from '../session-view.js';
import { creatingTenant } from '../tenancy.js';
import type { RestRouteDeps } from './rest-route-deps.js';
import { sessionIdParams, sessionSummarySchema, sessionViewSchema } from './schemas.js';

const name = { type: 'string', minLength: 1, maxLength: 128 } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: Object.assign({ description: 'Default: a random UUID' }, name),
    agent: { type: 'string', minLength: 1, maxLength: 64 },
    systemPrompt: { type: 'string', nullable: true },
    metadata: { type: 'object', additionalProperties: true },
    tenant: Object.assign({ description: "Default: the token's; only an admin token of every tenant may choose" }, name),
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tenant: name,
    agent: { type: 'string', minLength: 1, maxLength: 64 },
    status: { type: 'string', enum: ['idle', 'running', 'waiting_for_input', 'waiting_for_children'] },
    prefix: Object.assign({ description: 'Session id prefix' }, name),
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: { type: 'string', minLength: 1, maxLength: 512, description: 'nextCursor of the previous page' },
  },
} as const;

const tags = ['sessions'];

interface CreateBody {
  id?: string;
  agent?: string;
  systemPrompt?: string | null;
  metadata?: Record<string, unknown>;
  tenant?: string;
}

/** Create, list, read and delete sessions. */
export const sessionRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, { queue, redis }) => {
  app.post<{ Body: CreateBody }>(
    '/v1/sessions',
    { schema: { summary: 'Create a session', tags, body: createBody, response: Object.assign({ 201: sessionViewSchema }, errorResponses, conflictResponse) } },
    async (request, reply) => {
      const body = request.body ?? {};
      const id = body.id ?? randomUUID();
      assertMayTouch(request.principal, id, 'write');
      const params: CreateSessionParams = { id };
      if (body.agent !== undefined) params.agent = body.agent;
      if (body.systemPrompt !== undefined) params.systemPrompt = body.systemPrompt;
      if (body.metadata !== undefined) params.metadata = body.metadata;
      params.tenant = creatingTenant(request.principal, body.tenant);
      const session = await queue.sessions.create(params);
      return reply.code(201).send(await sessionView(queue, redis, session));
    },
  );

  app.get<{ Querystring: { tenant?: string; agent?: string; status?: SessionStatus; prefix?: string; limit?: number; cursor?: string } }>(
    '/v1/sessions',
    {
      schema: {
        summary: 'List sessions, newest first',
        tags,
        querystring: listQuery,
        response: Object.assign(
          { 200: { type: 'object', required: ['sessions', 'nextCursor'], properties: { sessions: { type: 'array', items: sessionSummarySchema }, nextCursor: { type: 'string', nullable: true } } } },
          errorResponses,
        ),
      },
    },
    async (request) => listForCaller(queue, request.principal, request.query),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    { schema: { summary: 'A session: record, inputs by status, stats, children, event cursor', tags, params: sessionIdParams, response: Object.assign({ 200: sessionViewSchema }, errorResponses) } },
    async (request) => sessionView(queue, redis, await requireSession(queue, request, request.params.id, 'read')),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    { schema: { summary: 'Delete a session and everything it owns', tags, params: sessionIdParams, response: Object.assign({ 204: { type: 'null', description: 'Deleted' } }, errorResponses) } },
    async (request, reply) => {
      const session = await requireSession(queue, request, request.params.id, 'write');
      if (!(await queue.sessions.delete(session.id))) throw new SessionNotFoundError(`session ${session.id} does not exist`, { details: { sessionId: session.id } });
      return reply.code(204).send();
    },
  );
};
