import type pg from 'pg';
import { z } from 'zod';
import { SessionNotFoundError, StateCorruptError } from '../../core/errors/index.js';
import type { AcquireLeaseParams, LeaseAcquisition, LeaseAndClaim } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertTenant } from '../../fleet/tenant-name.js';
import { assertText, assertTtlMs } from '../postgres/arguments.js';
import { decodeClaim } from '../inbox/claim-next-input.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { ACQUIRE_LEASE_SQL, LEASE_HOLDER_SQL } from './acquire-lease-sql.js';
import { ACQUIRE_LEASES_AND_CLAIM, SESSION_PREFIX } from '../inbox/claim-next-input-sql.js';
import type { RowBatcher } from '../batching/row-batcher.js';
import { atCap, takeCappedLease } from './acquire-capped-lease.js';
import { queueMismatch } from '../agents/agent-refusals.js';
import { optionalQueueName } from '../../fleet/queue-name.js';

/** Longest owner string; it is a worker id, shown to others and in logs. */
const MAX_OWNER_LENGTH = 200;

const acquiredSchema = z.object({ token: z.number().int().positive(), expiresAt: z.date() });
const holderSchema = z.object({
  holder: z.string().nullable(),
  retryAfterMs: z.number().int().nonnegative(),
  tenant: z.string(),
  cap: z.number().int().positive().nullable(),
  queue: z.string(),
});

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
 *
 * A session whose tenant caps its inputs running at once is refused by that statement; when the lease
 * is free the capped take follows (`./acquire-capped-lease.ts`), and its answer may be `atCap`. A
 * caller that knows the tenant is capped (`cappedTenant`) goes there directly.
 */
export async function acquireLeaseAndClaim(pool: pg.Pool, batcher: RowBatcher, params: AcquireLeaseParams): Promise<LeaseAndClaim> {
  const request = leaseRequest(params);
  const { sessionId, owner, ttlMs } = request;
  if (params.cappedTenant !== undefined) return takeUnderCap(pool, request, assertTenant(params.cappedTenant, 'cappedTenant'));
  const record = `{"session_id":${JSON.stringify(sessionId)},"owner":${JSON.stringify(owner)},"ttl_ms":${ttlMs},"queue":${JSON.stringify(request.queue ?? null)}}`;
  const row = (await batcher.submit({ statement: ACQUIRE_LEASES_AND_CLAIM, sessionId, record })) as Record<string, unknown> | undefined;
  if (row !== undefined) return decodeLeaseAndClaim(sessionId, row);
  const held = await readHolder(pool, sessionId);
  assertOnQueue(request, held.queue);
  // Free, but the plain take refused it: its tenant caps the inputs it runs at once.
  if (held.retryAfterMs === 0 && held.cap !== null) return takeUnderCap(pool, request, held.tenant);
  return { acquired: false, holder: held.holder, retryAfterMs: held.retryAfterMs };
}

/** The capped take (`./acquire-capped-lease.ts`), decoded: the lease, the holder that beat it, or the tenant at its cap. */
async function takeUnderCap(pool: pg.Pool, request: AcquireLeaseParams, tenant: string): Promise<LeaseAndClaim> {
  const taken = await takeCappedLease(pool, request, tenant);
  if (taken.kind === 'at_cap') return atCap(tenant, taken.limit);
  if (taken.row === undefined) {
    assertOnQueue(request, (await readHolder(pool, request.sessionId)).queue);
    return leaseHeld(pool, request.sessionId);
  }
  return Object.assign(decodeLeaseAndClaim(request.sessionId, taken.row), { cappedTenant: tenant });
}

function decodeLeaseAndClaim(sessionId: string, row: Record<string, unknown>): Extract<LeaseAndClaim, { acquired: true }> {
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
  const claimed = row.seq !== null ? decodeClaim(row as Parameters<typeof decodeClaim>[0]) : row.sawOpen === true ? undefined : null;
  return { acquired: true, token: lease.token, expiresAt: lease.expiresAt, finishesOwed, claimed };
}

function leaseRequest(params: AcquireLeaseParams): AcquireLeaseParams {
  const queue = optionalQueueName(params.queue);
  return Object.assign(
    { sessionId: assertSessionId(params.sessionId), owner: assertText(params.owner, 'owner', MAX_OWNER_LENGTH), ttlMs: assertTtlMs(params.ttlMs) },
    queue === null ? {} : { queue },
  );
}

/** A take refused because the session runs on another queue than the drain's: `session.queue_mismatch`. */
function assertOnQueue(request: AcquireLeaseParams, sessionQueue: string): void {
  if (request.queue === undefined || sessionQueue === '' || sessionQueue === request.queue) return;
  throw queueMismatch(request.sessionId, request.queue, sessionQueue);
}

/** After a failed attempt, in its own snapshot: the holder that beat us, or `session.not_found`. */
async function leaseHeld(db: Queryable, sessionId: string): Promise<Extract<LeaseAcquisition, { acquired: false }>> {
  const { holder, retryAfterMs } = await readHolder(db, sessionId);
  return { acquired: false, holder, retryAfterMs };
}

/** The lease's holder and the session's tenant with its cap, or `session.not_found`. */
async function readHolder(db: Queryable, sessionId: string): Promise<z.infer<typeof holderSchema>> {
  const current = await db.query(LEASE_HOLDER_SQL, [sessionId]);
  if (current.rows[0] === undefined) {
    throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  }
  return parseRow(holderSchema, current.rows[0], `lease of session ${sessionId}`);
}
