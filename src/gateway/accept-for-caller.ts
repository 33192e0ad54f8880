import type { FastifyRequest } from 'fastify';
import { isLoopfleetError, SessionNotFoundError } from '../core/errors/index.js';
import { assertNewSessionId } from '../fleet/session-id.js';
import type { AddData, AddKind } from '../producer/add-request.js';
import type { InputHandle } from '../producer/input-handle.js';
import type { SessionQueue } from '../producer/session-queue.js';
import { assertMayTouch } from './session-access.js';

/**
 * Accepts an input for the caller (write scope): into its own tenant's session, which the add
 * creates for that tenant when it is new. A session of another tenant is `session.not_found`, as
 * if it did not exist: the store refuses the add with `session.tenant_mismatch`, writing nothing.
 */
export async function acceptForCaller(queue: SessionQueue, request: FastifyRequest, kind: AddKind, data: AddData): Promise<InputHandle> {
  const { principal } = request;
  const sessionId = assertNewSessionId(data.sessionId);
  assertMayTouch(principal, sessionId, 'write');
  // The tenant check is the accept statement's own (`session.tenant_mismatch`, nothing written): no
  // read first. A principal of every tenant names none, so it adds to any session and creates in `default`.
  const withTenant: AddData = principal.tenant === null ? data : Object.assign({}, data, { tenant: principal.tenant });
  try {
    return await queue.add(kind, withTenant);
  } catch (error) {
    // Another tenant's session is not told apart from a missing one; an admin naming the wrong tenant hears 409.
    if (principal.tenant !== null && isLoopfleetError(error) && error.code === 'session.tenant_mismatch') throw notFound(sessionId);
    throw error;
  }
}

function notFound(sessionId: string): SessionNotFoundError {
  return new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
}
