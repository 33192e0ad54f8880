import type { FastifyPluginAsync } from 'fastify';
import { AuthForbiddenError } from '../../core/errors/index.js';
import type { TenantSettingsPatch, TenantSettingsRecord } from '../../core/ports/tenant-admin.js';
import { assertTenant } from '../../fleet/tenant-name.js';
import { adminTenant, assertAdmin } from '../admin-access.js';
import { errorResponses } from '../openapi.js';
import type { Principal } from '../principal.js';
import type { RestRouteDeps } from './rest-route-deps.js';

const tags = ['tenants'];
const tenantParams = { type: 'object', required: ['tenant'], properties: { tenant: { type: 'string', minLength: 1, maxLength: 128 } } } as const;
const nullableDate = { type: 'string', format: 'date-time', nullable: true } as const;

const settingsSchema = {
  type: 'object',
  required: ['tenant', 'weight', 'maxConcurrentInputs', 'maxInputsPerSecond', 'stored'],
  properties: {
    tenant: { type: 'string' },
    weight: { type: 'integer' },
    maxConcurrentInputs: { type: 'integer', nullable: true },
    maxInputsPerSecond: { type: 'number', nullable: true },
    stored: { type: 'boolean', description: 'False: the tenant has no settings of its own and runs with these defaults' },
    createdAt: nullableDate,
    updatedAt: nullableDate,
  },
} as const;

const patchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    weight: { type: 'integer', minimum: 1, maximum: 10_000 },
    maxConcurrentInputs: { type: 'integer', minimum: 1, nullable: true, description: 'null: no cap' },
    maxInputsPerSecond: { type: 'number', exclusiveMinimum: 0, nullable: true, description: 'null: no cap' },
  },
} as const;

/** The settings as the routes answer them: stored, or the defaults marked `stored: false`. */
function settingsView(tenant: string, record: TenantSettingsRecord | null): object {
  if (record === null) return { tenant, weight: 100, maxConcurrentInputs: null, maxInputsPerSecond: null, stored: false, createdAt: null, updatedAt: null };
  return Object.assign({}, record, { stored: true });
}

/** Only an admin of every tenant changes settings: a tenant must not raise its own share. */
function assertFleetAdmin(principal: Principal): void {
  assertAdmin(principal);
  if (principal.tenant !== null) throw new AuthForbiddenError('tenant settings are changed by an admin of every tenant; this token acts for one');
}

/** Tenant settings (docs/client.md, "Tenant settings"): admin scope; a tenant's admin reads its own only. */
export const tenantRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, { queue }) => {
  app.get<{ Querystring: { limit?: number; after?: string } }>(
    '/v1/tenants',
    {
      schema: {
        summary: 'Tenants with settings of their own, by name',
        tags,
        querystring: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 1000 }, after: { type: 'string', minLength: 1, maxLength: 128 } } },
        response: Object.assign({ 200: { type: 'object', properties: { tenants: { type: 'array', items: settingsSchema } } } }, errorResponses),
      },
    },
    async (request) => {
      const own = adminTenant(request.principal, undefined);
      if (own !== undefined) return { tenants: [settingsView(own, await queue.tenants.get(own))] };
      const options: { limit?: number; after?: string } = {};
      if (request.query.limit !== undefined) options.limit = request.query.limit;
      if (request.query.after !== undefined) options.after = request.query.after;
      return { tenants: (await queue.tenants.list(options)).map((record) => settingsView(record.tenant, record)) };
    },
  );

  app.get<{ Params: { tenant: string } }>(
    '/v1/tenants/:tenant',
    { schema: { summary: "A tenant's settings (the defaults when it has none)", tags, params: tenantParams, response: Object.assign({ 200: settingsSchema }, errorResponses) } },
    async (request) => {
      const tenant = adminTenant(request.principal, assertTenant(request.params.tenant))!;
      return settingsView(tenant, await queue.tenants.get(tenant));
    },
  );

  app.put<{ Params: { tenant: string }; Body: TenantSettingsPatch }>(
    '/v1/tenants/:tenant',
    { schema: { summary: "Change a tenant's settings: the fields given (null removes a cap)", tags, params: tenantParams, body: patchBody, response: Object.assign({ 200: settingsSchema }, errorResponses) } },
    async (request) => {
      assertFleetAdmin(request.principal);
      const record = await queue.tenants.set(request.params.tenant, request.body ?? {});
      return settingsView(record.tenant, record);
    },
  );

  app.delete<{ Params: { tenant: string } }>(
    '/v1/tenants/:tenant',
    { schema: { summary: "Remove a tenant's settings (back to the defaults)", tags, params: tenantParams, response: Object.assign({ 204: { type: 'null', description: 'Removed, or there were none' } }, errorResponses) } },
    async (request, reply) => {
      assertFleetAdmin(request.principal);
      await queue.tenants.delete(request.params.tenant);
      return reply.code(204).send();
    },
  );
};
