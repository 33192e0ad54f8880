import { InteractionNotPendingError, SessionNotFoundError } from '../core/errors/index.js';
import { parseInputPayload } from '../core/input-payload.js';
import type { ClientStore } from '../core/ports/client-store.js';
import type { AcceptRequest } from '../fleet/accept-input.js';

/**
 * Refuses an answer to a question the session is not waiting on, before anything is written: a
 * `resume` with `submit` whose `interactionId` is not one of the session's pending interactions
 * (`interaction.not_pending`), or whose session does not exist (`session.not_found`). Accepted, such
 * an answer would only fail later on a worker, with the caller long gone. Other inputs pass.
 *
 * The check reads the session once: a question answered between it and the accept is still refused
 * by the worker that runs the input (`input.invalid`). A retried answer whose `inputId` was accepted
 * before passes, so the add stays idempotent (it returns the original, `duplicate: true`).
 */
export async function assertInteractionPending(store: Pick<ClientStore, 'getSession' | 'getInputById'>, request: AcceptRequest): Promise<void> {
  if (request.kind !== 'resume') return;
  // A malformed payload is the accept's to refuse, with its own message.
  const parsed = parseInputPayload(request.kind, request.payload);
  if (parsed.kind !== 'resume' || parsed.payload.submit === undefined) return;
  const { sessionId } = request;
  const { interactionId } = parsed.payload.submit;
  const session = await store.getSession(sessionId);
  if (session === null) throw new SessionNotFoundError(`session ${sessionId} does not exist: there is no question to answer`, { details: { sessionId } });
  const pending = session.pending?.interactions.map((entry) => entry.interactionId) ?? [];
  if (pending.includes(interactionId)) return;
  // A retry of an answer already accepted (same inputId) is the accept's duplicate, not a refusal.
  if (request.inputId !== undefined && (await store.getInputById(sessionId, request.inputId)) !== null) return;
  const waiting = pending.length === 0 ? 'it is not waiting for an answer' : `it waits on ${pending.join(', ')}`;
  throw new InteractionNotPendingError(`session ${sessionId} has no pending question ${interactionId}: ${waiting}`, {
    details: { sessionId, interactionId, pending: pending.slice(0, 20) },
  });
}
