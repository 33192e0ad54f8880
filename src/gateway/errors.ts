import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isLoopfleetError, type LoopfleetError } from '../core/errors/index.js';

/** The body of every error answer: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** The HTTP status of each stable code the gateway answers with; any other code is 500. */
export const STATUS_BY_CODE: Readonly<Record<string, number>> = Object.freeze({
  'session.not_found': 404,
  'agent.not_found': 404,
  'input.not_found': 404,
  'budget.not_found': 404,
  'input.invalid': 400,
  'session.invalid_id': 400,
  'input.too_large': 413,
  'session.exists': 409,
  'session.agent_mismatch': 409,
  'session.tenant_mismatch': 409,
  'session.queue_mismatch': 409,
  'session.pending': 409,
  'interaction.not_pending': 409,
  'state.conflict': 409,
  'auth.missing_token': 401,
  'auth.invalid_token': 401,
  'auth.expired': 401,
  'auth.forbidden': 403,
  rate_limited: 429,
  'tenant.rate_limited': 429,
  'budget.exceeded': 402,
  'system.infrastructure': 503,
});

/** A request over `GATEWAY_RATE_LIMIT`: 429 `rate_limited`, with `Retry-After`. */
export class RateLimitedError extends Error {
  readonly code = 'rate_limited';
  readonly statusCode = 429;
}

/** The status and body of an error: typed errors keep their code, Fastify's own map to ours, the rest is 500 `internal`. */
export function toErrorBody(error: unknown): { status: number; body: ErrorBody } {
  if (isLoopfleetError(error)) return typed(error);
  if (error instanceof RateLimitedError) return answer(429, 'rate_limited', error.message);
  const fastify = error as Partial<FastifyError> | null;
  if (fastify !== null && typeof fastify === 'object') {
    if (fastify.validation !== undefined) return answer(400, 'input.invalid', fastify.message ?? 'invalid request');
    if (fastify.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return answer(413, 'input.too_large', 'request body is too large');
    const status = fastify.statusCode;
    // Fastify's own refusals (bad JSON, wrong media type …) are the caller's: their status, our code.
    if (typeof status === 'number' && status >= 400 && status < 500 && typeof fastify.code === 'string' && fastify.code.startsWith('FST_')) {
      return answer(status, 'input.invalid', fastify.message ?? 'invalid request');
    }
  }
  return answer(500, 'internal', 'internal error');
}

function typed(error: LoopfleetError): { status: number; body: ErrorBody } {
  const status = STATUS_BY_CODE[error.code];
  if (status === undefined) return answer(500, 'internal', 'internal error');
  const details = Object.keys(error.details).length > 0 ? error.details : undefined;
  return answer(status, error.code, error.message, details);
}

function answer(status: number, code: string, message: string, details?: Record<string, unknown>): { status: number; body: ErrorBody } {
  const error: ErrorBody['error'] = { code, message };
  if (details !== undefined) error.details = details;
  return { status, body: { error } };
}

/** Answers an error as JSON with its status; a 500 or 503 is logged with the request's logger. */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const { status, body } = toErrorBody(error);
  if (status >= 500) reply.log.error({ err: error }, 'request failed');
  if (status === 429) {
    const retryAfter = reply.getHeader('retry-after');
    // A tenant over its admission rate says when its next input is admitted; whole seconds, rounded up.
    const retryAfterMs = body.error.details?.retryAfterMs;
    if (typeof retryAfterMs === 'number' && retryAfterMs > 0) reply.header('retry-after', Math.ceil(retryAfterMs / 1000));
    else if (retryAfter === undefined) reply.header('retry-after', 60);
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** Fastify's error handler: every thrown error becomes {@link sendError}'s answer. */
export function errorHandler(error: unknown, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, error);
}

/** Fastify's not-found handler: 404 `route.not_found` as JSON. */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ error: { code: 'route.not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` } });
}
