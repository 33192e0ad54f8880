import type { FastifyRequest } from 'fastify';
import { isLoopfleetError, SessionNotFoundError } from '../core/errors/index.js';
import { assertNewSessionId } from '../fleet/session-id.js';
import type { AddData, AddKind } from '../producer/add-request.js';
import type { InputHandle } from '../producer/input-handle.js';
import type { SessionQueue } from '../producer/session-queue.js';
import { coversTenant } from './principal.js';
import { assertMayTouch } from './session-access.js';
import { DEFAULT_TENANT, sessionTenant } from './tenancy.js';

/**
 * Accepts an input for the caller (write scope): into its own tenant's session, which the add
 * creates for that tenant when it is new. A session of another tenant is `session.not_found`, as
 * if it did not exist; the store refuses one created by another tenant in between the same way.
 */
export async function acceptForCaller(queue: SessionQueue, request: FastifyRequest, kind: AddKind, data: AddData): Promise<InputHandle> {
  const { principal } = request;
  const sessionId = assertNewSessionId(data.sessionId);
  assertMayTouch(principal, sessionId, 'write');
  const existing = await queue.sessions.get(sessionId);
  if (existing !== null && !coversTenant(principal, sessionTenant(existing))) throw notFound(sessionId);
  // The default tenant is the store's own default: it is left out, as a caller of the library would.
  const tenant = principal.tenant ?? (existing !== null ? sessionTenant(existing) : undefined);
  const withTenant: AddData = tenant === undefined || tenant === DEFAULT_TENANT ? data : Object.assign({}, data, { tenant });
  try {
    return await queue.add(kind, withTenant);
  } catch (error) {
    if (isLoopfleetError(error) && error.code === 'session.tenant_mismatch') throw notFound(sessionId);
    throw error;
  }
}

function notFound(sessionId: string): SessionNotFoundError {
  return new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
}
