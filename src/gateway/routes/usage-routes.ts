import type { FastifyPluginAsync } from 'fastify';
import type { UsageGroupBy, UsageQuery } from '../../core/ports/tenant-admin.js';
import { adminTenant } from '../admin-access.js';
import { errorResponses } from '../openapi.js';
import type { RestRouteDeps } from './rest-route-deps.js';

const sumsProperties = {
  llmCalls: { type: 'integer' },
  inputs: { type: 'integer', description: 'Inputs with usage in the group' },
  promptTokens: { type: 'integer' },
  completionTokens: { type: 'integer' },
  cachedTokens: { type: 'integer' },
  cacheWriteTokens: { type: 'integer' },
  reasoningTokens: { type: 'integer' },
  totalTokens: { type: 'integer' },
  costUsd: { type: 'number' },
  costPicoUsd: { type: 'string', description: 'Exact cost: picodollars (10^-12 USD) as integer text' },
  unpricedCalls: { type: 'integer', description: 'LLM calls of models without a price (not in the cost)' },
} as const;

const usageQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'groupBy'],
  properties: {
    tenant: { type: 'string', minLength: 1, maxLength: 128, description: "Default: the token's (every tenant for an admin of all)" },
    agent: { type: 'string', minLength: 1, maxLength: 64 },
    from: { type: 'string', format: 'date-time', description: 'Inclusive' },
    to: { type: 'string', format: 'date-time', description: 'Exclusive' },
    groupBy: { type: 'string', enum: ['day', 'agent', 'model', 'session'] },
    limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000 },
  },
} as const;

const usageBody = {
  type: 'object',
  required: ['groupBy', 'from', 'to', 'rows', 'totals', 'truncated'],
  properties: {
    groupBy: { type: 'string' },
    tenant: { type: 'string', nullable: true },
    agent: { type: 'string', nullable: true },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    rows: { type: 'array', items: { type: 'object', properties: Object.assign({ key: { type: 'string' } }, sumsProperties) } },
    totals: { type: 'object', properties: sumsProperties },
    truncated: { type: 'boolean', description: 'Groups past the limit were left out (the totals cover them)' },
  },
} as const;

interface Query {
  tenant?: string;
  agent?: string;
  from: string;
  to: string;
  groupBy: UsageGroupBy;
  limit?: number;
}

/** `GET /v1/usage` (docs/usage.md): admin scope; a principal of one tenant reads its own only. */
export const usageRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, { queue }) => {
  app.get<{ Querystring: Query }>(
    '/v1/usage',
    { schema: { summary: 'Tokens and cost used in [from, to), grouped by day, agent, model or session', tags: ['usage'], querystring: usageQuery, response: Object.assign({ 200: usageBody }, errorResponses) } },
    async (request) => {
      const { agent, from, to, groupBy, limit } = request.query;
      const query: UsageQuery = { from, to, groupBy };
      const tenant = adminTenant(request.principal, request.query.tenant);
      if (tenant !== undefined) query.tenant = tenant;
      if (agent !== undefined) query.agent = agent;
      if (limit !== undefined) query.limit = limit;
      return queue.usage(query);
    },
  );
};
