import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LOOPBACK_PRINCIPAL, type Principal } from '../principal.js';
import type { TokenVerifier } from './token-verifier.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, from the bearer token (docs/gateway.md, "Auth"). */
    principal: Principal;
  }
}

/** Paths anyone may read: the OpenAPI document; everything outside `/v1/` (health, metrics, the viewer's files). */
export function isPublicPath(url: string): boolean {
  const path = url.split('?')[0]!;
  return !path.startsWith('/v1/') || path === '/v1/openapi.json';
}

/**
 * Decorates every request with its principal, verified in an `onRequest` hook before anything else
 * runs (rate limits key on it). Public paths and CORS preflights get the loopback principal unverified and must not use it.
 */
export function addAuthHook(app: FastifyInstance, verify: TokenVerifier): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.method === 'OPTIONS' || isPublicPath(request.url)) {
      request.principal = LOOPBACK_PRINCIPAL;
      return;
    }
    request.principal = await verify(request.headers.authorization);
  });
}
