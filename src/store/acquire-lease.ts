import { z } from 'zod';
import { SessionNotFoundError } from '../core/errors/index.js';
import type { AcquireLeaseParams, LeaseAcquisition } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { assertText, assertTtlMs } from './arguments.js';
import type { Queryable } from './queryable.js';
import { parseRow } from './rows/parse-row.js';
import { ACQUIRE_LEASE_SQL, LEASE_HOLDER_SQL } from './sql/acquire-lease.js';

/** Longest owner string; it is a worker id, shown to others and in logs. */
const MAX_OWNER_LENGTH = 200;

const acquiredSchema = z.object({ token: z.number().int().positive(), expiresAt: z.date() });
const holderSchema = z.object({ holder: z.string().nullable(), retryAfterMs: z.number().int().nonnegative() });

/**
 * Takes the session's lease if it is free or lapsed (DESIGN.md §4.3), on the database clock so worker
 * clocks do not matter. Otherwise reports the holder and how long until its lease lapses, so the
 * caller can delay and re-check rather than give up.
 */
export async function acquireLease(db: Queryable, params: AcquireLeaseParams): Promise<LeaseAcquisition> {
  const sessionId = assertSessionId(params.sessionId);
  const owner = assertText(params.owner, 'owner', MAX_OWNER_LENGTH);
  const ttlMs = assertTtlMs(params.ttlMs);
  const updated = await db.query(ACQUIRE_LEASE_SQL, [sessionId, owner, ttlMs]);
  if (updated.rows[0] !== undefined) {
    const lease = parseRow(acquiredSchema, updated.rows[0], `lease of session ${sessionId}`);
    return { acquired: true, token: lease.token, expiresAt: lease.expiresAt };
  }
  // Read after the failed attempt, in its own snapshot: it sees the holder that beat us.
  const current = await db.query(LEASE_HOLDER_SQL, [sessionId]);
  if (current.rows[0] === undefined) {
    throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  }
  const { holder, retryAfterMs } = parseRow(holderSchema, current.rows[0], `lease of session ${sessionId}`);
  return { acquired: false, holder, retryAfterMs };
}
