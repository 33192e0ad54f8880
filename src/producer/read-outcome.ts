import { InputInvalidError, SessionNotFoundError } from '../core/errors/index.js';
import type { ClientStore } from '../core/ports/client-store.js';
import { outcomeFromRecord, type InputOutcome } from './input-outcome.js';

/**
 * Reads an input's outcome from Postgres, the system of record: null while it has not settled.
 * Throws `session.not_found` when the session is gone and `input.invalid` when it has no such input,
 * because waiting for either would never end.
 */
export async function readSettledOutcome(store: ClientStore, sessionId: string, seq: number): Promise<InputOutcome | null> {
  const record = await store.getInput(sessionId, seq);
  if (record !== null) return outcomeFromRecord(record);
  if ((await store.getSession(sessionId)) === null) {
    throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  }
  throw new InputInvalidError(`session ${sessionId} has no input with seq ${seq}`, { details: { sessionId, seq } });
}

/** Checks an input seq argument: a positive safe integer. */
export function assertInputSeq(seq: unknown): number {
  if (typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0) return seq;
  throw new InputInvalidError(`input seq must be a positive integer, got ${String(seq)}`);
}
