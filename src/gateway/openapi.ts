import type { SwaggerOptions } from '@fastify/swagger';

/** The OpenAPI document's header (`GET /v1/openapi.json`); the paths come from the route schemas. */
export const OPENAPI_INFO: NonNullable<Extract<SwaggerOptions, { openapi?: unknown }>['openapi']> = {
  openapi: '3.0.3',
  info: { title: 'loopfleet gateway', version: '1', description: 'REST and SSE API of a loopfleet fleet (docs/gateway.md).' },
  components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
  security: [{ bearer: [] }],
};

/** The error body of every failed request. */
export const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: true } },
    },
  },
} as const;

/** The error answers every authenticated route may give. */
export const errorResponses = {
  400: Object.assign({ description: 'input.invalid, session.invalid_id' }, errorSchema),
  401: Object.assign({ description: 'auth.missing_token, auth.invalid_token, auth.expired' }, errorSchema),
  403: Object.assign({ description: 'auth.forbidden' }, errorSchema),
  404: Object.assign({ description: 'session.not_found' }, errorSchema),
  429: Object.assign({ description: 'rate_limited' }, errorSchema),
  503: Object.assign({ description: 'system.infrastructure' }, errorSchema),
} as const;

/** Refusals of a write that conflicts with the session's state. */
export const conflictResponse = { 409: Object.assign({ description: 'session.exists, session.agent_mismatch, session.pending, state.conflict' }, errorSchema) } as const;

/** A body over the limit. */
export const tooLargeResponse = { 413: Object.assign({ description: 'input.too_large' }, errorSchema) } as const;
