import type { FastifyRequest } from 'fastify';
import { AuthForbiddenError, SessionNotFoundError } from '../core/errors/index.js';
import type { SessionRecord } from '../core/session-types.js';
import type { SessionQueue } from '../producer/session-queue.js';
import { assertSessionId } from '../fleet/session-id.js';
import { coversSessionId, coversTenant, hasScope, type Principal, type Scope } from './principal.js';
import { sessionTenant } from './tenancy.js';

/**
 * Throws `auth.forbidden` unless the principal's scope includes `needed` and its `sessions` claim
 * covers the id. Run before any read, so a refused caller learns nothing about the session.
 */
export function assertMayTouch(principal: Principal, sessionId: string, needed: Scope): void {
  if (!hasScope(principal, needed)) throw new AuthForbiddenError(`this needs scope ${needed}; the token has ${principal.scope}`);
  if (!coversSessionId(principal, sessionId)) throw new AuthForbiddenError(`the token's sessions claim does not cover session ${sessionId}`);
}

/**
 * The session the request may touch with `needed` scope: `auth.forbidden` (403) when the scope or
 * the `sessions` claim does not cover it; `session.not_found` (404) when there is none or it
 * belongs to another tenant (which is not told apart, so nothing leaks).
 */
export async function requireSession(queue: SessionQueue, request: FastifyRequest, sessionId: string, needed: Scope): Promise<SessionRecord> {
  const id = assertSessionId(sessionId);
  assertMayTouch(request.principal, id, needed);
  const session = await queue.sessions.get(id);
  if (session === null || !coversTenant(request.principal, sessionTenant(session))) {
    throw new SessionNotFoundError(`session ${id} does not exist`, { details: { sessionId: id } });
  }
  return session;
}
