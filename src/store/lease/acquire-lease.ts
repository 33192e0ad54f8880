import type pg from 'pg';
import { z } from 'zod';
import { SessionNotFoundError, StateCorruptError } from '../../core/errors/index.js';
import type { AcquireLeaseParams, LeaseAcquisition, LeaseAndClaim } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertText, assertTtlMs } from '../postgres/arguments.js';
import { decodeClaim } from '../inbox/claim-next-input.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { ACQUIRE_LEASE_SQL, LEASE_HOLDER_SQL } from './acquire-lease-sql.js';
import { ACQUIRE_LEASES_AND_CLAIM, SESSION_PREFIX } from '../inbox/claim-next-input-sql.js';
import type { RowBatcher } from '../batching/row-batcher.js';

/** Longest owner string; it is a worker id, shown to others and in logs. */
const MAX_OWNER_LENGTH = 200;

const acquiredSchema = z.object({ token: z.number().int().positive(), expiresAt: z.date() });
const holderSchema = z.object({ holder: z.string().nullable(), retryAfterMs: z.number().int().nonnegative() });

/**
 * Takes the session's lease if it is free or lapsed, on the database clock so worker
 * clocks do not matter. Otherwise reports the holder and how long until its lease lapses, so the
 * caller can delay and re-check rather than give up.
 */
export async function acquireLease(db: Queryable, params: AcquireLeaseParams): Promise<LeaseAcquisition> {
  const { sessionId, owner, ttlMs } = leaseRequest(params);
  const updated = await db.query(ACQUIRE_LEASE_SQL, [sessionId, owner, ttlMs]);
  if (updated.rows[0] === undefined) return leaseHeld(db, sessionId);
  const lease = parseRow(acquiredSchema, updated.rows[0], `lease of session ${sessionId}`);
  return { acquired: true, token: lease.token, expiresAt: lease.expiresAt };
}

/**
 * {@link acquireLease} and, when acquired, the claim of the lowest open input under the new token, in
 * one statement ({@link ACQUIRE_LEASES_AND_CLAIM}): the first round trip of every drain, shared with
 * drains of other sessions starting at the same moment. No second statement follows: a claim left to
 * the caller (`claimed` undefined) fails, if it does, where the caller holds the token and releases
 * the lease — here it would leave the lease held, the token lost with the exception, until it lapsed.
 */
export async function acquireLeaseAndClaim(pool: pg.Pool, batcher: RowBatcher, params: AcquireLeaseParams): Promise<LeaseAndClaim> {
  const { sessionId, owner, ttlMs } = leaseRequest(params);
  const record = `{"session_id":${JSON.stringify(sessionId)},"owner":${JSON.stringify(owner)},"ttl_ms":${ttlMs}}`;
  const row = (await batcher.submit({ statement: ACQUIRE_LEASES_AND_CLAIM, sessionId, record })) as
    | (Record<string, unknown> & { seq: unknown; resumed: unknown; woken: unknown; pendingInputs: unknown; pendingSteers: unknown; finishesOwed: unknown; sawOpen: unknown })
    | undefined;
  if (row === undefined) return leaseHeld(pool, sessionId);
  const lease = parseRow(
    acquiredSchema,
    { token: row[`${SESSION_PREFIX}leaseToken`], expiresAt: row[`${SESSION_PREFIX}leaseExpiresAt`] },
    `lease of session ${sessionId}`,
  );
  const { finishesOwed } = row;
  if (typeof finishesOwed !== 'boolean') throw new StateCorruptError(`lease of session ${sessionId}: finishesOwed is not a boolean`, { details: { sessionId } });
  // Nothing claimed though the snapshot saw an open input: a finish is owed (the drain repairs it
  // first), or the lapsed holder ended that input while the statement waited for the row. Either way
  // the caller claims what is open then, in a new snapshot, under the new token.
  const claimed = row.seq !== null ? decodeClaim(row) : row.sawOpen === true ? undefined : null;
  return { acquired: true, token: lease.token, expiresAt: lease.expiresAt, finishesOwed, claimed };
}

function leaseRequest(params: AcquireLeaseParams): AcquireLeaseParams {
  return {
    sessionId: assertSessionId(params.sessionId),
    owner: assertText(params.owner, 'owner', MAX_OWNER_LENGTH),
    ttlMs: assertTtlMs(params.ttlMs),
  };
}

/** After a failed attempt, in its own snapshot: the holder that beat us, or `session.not_found`. */
async function leaseHeld(db: Queryable, sessionId: string): Promise<Extract<LeaseAcquisition, { acquired: false }>> {
  const current = await db.query(LEASE_HOLDER_SQL, [sessionId]);
  if (current.rows[0] === undefined) {
    throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  }
  const { holder, retryAfterMs } = parseRow(holderSchema, current.rows[0], `lease of session ${sessionId}`);
  return { acquired: false, holder, retryAfterMs };
}
