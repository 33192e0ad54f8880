import type { FastifyPluginAsync } from 'fastify';
import { errorResponses } from '../openapi.js';

const meBody = {
  type: 'object',
  required: ['tenant', 'scope', 'sessions', 'subject'],
  properties: {
    tenant: { type: 'string', nullable: true },
    scope: { type: 'string', enum: ['read', 'write', 'admin'] },
    sessions: { type: 'array', items: { type: 'string' }, nullable: true },
    subject: { type: 'string', nullable: true },
  },
} as const;

/** `GET /v1/me`: who the token says the caller is. */
export const meRoutes: FastifyPluginAsync = async (app) => {
  app.get('/v1/me', { schema: { summary: 'The caller, as its token says', tags: ['auth'], response: Object.assign({ 200: meBody }, errorResponses) } }, async (request) => {
    const { tenant, scope, sessions, subject } = request.principal;
    return { tenant, scope, sessions, subject };
  });
};
