import type { FastifyPluginAsync } from 'fastify';
import { AuthForbiddenError, BudgetNotFoundError } from '../../core/errors/index.js';
import type { BudgetPeriod, BudgetScope, BudgetUnit, ListBudgetsOptions } from '../../core/ports/tenant-admin.js';
import type { Budget, BudgetParams } from '../../producer/budget-admin.js';
import { adminTenant, assertAdmin } from '../admin-access.js';
import { errorResponses } from '../openapi.js';
import { coversSessionId, coversTenant } from '../principal.js';
import type { RestRouteDeps } from './rest-route-deps.js';

const tags = ['budgets'];
const name = { type: 'string', minLength: 1, maxLength: 128 } as const;
const agentName = { type: 'string', minLength: 1, maxLength: 64 } as const;
const scope = { type: 'string', enum: ['session', 'tenant', 'agent'] } as const;
const date = { type: 'string', format: 'date-time' } as const;
const exactAmount = { type: 'string', description: 'Tokens, or picodollars (10^-12 USD), as integer text' } as const;

export const budgetSchema = {
  type: 'object',
  required: ['id', 'scope', 'tenant', 'unit', 'period', 'limit', 'used', 'reserved', 'remaining', 'windowStart', 'exact'],
  properties: {
    id: { type: 'integer' },
    scope,
    tenant: { type: 'string' },
    agent: { type: 'string', nullable: true },
    sessionId: { type: 'string', nullable: true },
    unit: { type: 'string', enum: ['tokens', 'usd'] },
    period: { type: 'string', enum: ['total', 'day', 'month'] },
    limit: { type: 'number', description: 'Tokens, or USD' },
    used: { type: 'number', description: 'Used in the current window by settled calls' },
    reserved: { type: 'number', description: 'Held by calls in flight' },
    remaining: { type: 'number', description: 'limit − used − reserved, at least 0' },
    windowStart: date,
    exact: { type: 'object', properties: { limit: exactAmount, used: exactAmount, reserved: exactAmount, remaining: exactAmount } },
    createdAt: date,
    updatedAt: date,
  },
} as const;

const setBody = {
  type: 'object',
  additionalProperties: false,
  required: ['scope', 'unit', 'period', 'limit'],
  properties: {
    scope,
    tenant: Object.assign({ description: "Default: the token's; a session budget takes its session's" }, name),
    agent: Object.assign({ description: 'The agent of an agent budget (only then)' }, agentName),
    sessionId: Object.assign({ description: 'The session of a session budget (only then)' }, name),
    unit: { type: 'string', enum: ['tokens', 'usd'] },
    period: { type: 'string', enum: ['total', 'day', 'month'] },
    // Left untyped here: the type keyword would coerce text to a number (and lose digits) before the
    // client's own check, which takes a number or decimal text.
    limit: { description: 'Tokens (a whole number), or USD with at most 12 decimals (a number or decimal text such as "0.01")' },
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tenant: name,
    scope,
    agent: agentName,
    sessionId: name,
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 1000 },
    afterId: { type: 'integer', minimum: 0, description: 'nextAfterId of the previous page' },
  },
} as const;

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } } as const;

interface SetBody {
  scope: BudgetScope;
  tenant?: string;
  agent?: string;
  sessionId?: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  limit: number | string;
}

/** Budgets (docs/budgets.md): admin scope; a principal of one tenant sees and sets its own only. */
export const budgetRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, { queue }) => {
  const requireBudget = async (principal: Parameters<typeof assertAdmin>[0], id: number): Promise<Budget> => {
    assertAdmin(principal);
    const budget = await queue.budgets.get(id);
    // Another tenant's budget is not told apart from none.
    if (budget === null || !coversTenant(principal, budget.tenant)) throw new BudgetNotFoundError(`budget ${id} does not exist`, { details: { budgetId: id } });
    return budget;
  };

  app.put<{ Body: SetBody }>(
    '/v1/budgets',
    { schema: { summary: 'Create a budget, or replace the limit of the one with the same scope, target, unit and period', tags, body: setBody, response: Object.assign({ 200: budgetSchema }, errorResponses) } },
    async (request) => {
      const body = request.body;
      const params: BudgetParams = { scope: body.scope, unit: body.unit, period: body.period, limit: body.limit };
      const tenant = adminTenant(request.principal, body.tenant);
      if (tenant !== undefined) params.tenant = tenant;
      if (body.agent !== undefined) params.agent = body.agent;
      if (body.sessionId !== undefined) {
        // A token limited to some sessions sets budgets on those only.
        if (!coversSessionId(request.principal, body.sessionId)) throw new AuthForbiddenError(`the token's sessions claim does not cover session ${body.sessionId}`);
        params.sessionId = body.sessionId;
      }
      return queue.budgets.set(params);
    },
  );

  app.get<{ Querystring: ListBudgetsOptions }>(
    '/v1/budgets',
    {
      schema: {
        summary: 'List budgets by id, with their current window',
        tags,
        querystring: listQuery,
        response: Object.assign(
          { 200: { type: 'object', required: ['budgets', 'nextAfterId'], properties: { budgets: { type: 'array', items: budgetSchema }, nextAfterId: { type: 'integer', nullable: true } } } },
          errorResponses,
        ),
      },
    },
    async (request) => {
      const options: ListBudgetsOptions = Object.assign({}, request.query);
      const tenant = adminTenant(request.principal, request.query.tenant);
      if (tenant !== undefined) options.tenant = tenant;
      const budgets = await queue.budgets.list(options);
      const limit = options.limit ?? 1000;
      return { budgets, nextAfterId: budgets.length === limit ? budgets.at(-1)!.id : null };
    },
  );

  app.get<{ Params: { id: number } }>(
    '/v1/budgets/:id',
    { schema: { summary: 'A budget with its current window', tags, params: idParams, response: Object.assign({ 200: budgetSchema }, errorResponses) } },
    async (request) => requireBudget(request.principal, request.params.id),
  );

  app.delete<{ Params: { id: number } }>(
    '/v1/budgets/:id',
    { schema: { summary: 'Delete a budget and its use', tags, params: idParams, response: Object.assign({ 204: { type: 'null', description: 'Deleted' } }, errorResponses) } },
    async (request, reply) => {
      const budget = await requireBudget(request.principal, request.params.id);
      if (!(await queue.budgets.delete(budget.id))) throw new BudgetNotFoundError(`budget ${budget.id} does not exist`, { details: { budgetId: budget.id } });
      return reply.code(204).send();
    },
  );
};
