/**
 * The lease records of the store ports (docs/fleet.md, "The drain, the lease and the fencing token"):
 * taking, renewing and releasing a session's lease, and the claim made with it.
 */
import type { InputRecord, SessionRecord } from '../session-types.js';

/** A request for a session's lease. */
export interface AcquireLeaseParams {
  sessionId: string;
  /** Who is asking (worker id); shown to others as the holder. */
  owner: string;
  /** Lease length in milliseconds, measured on the database clock. */
  ttlMs: number;
  /**
   * `acquireLeaseAndClaim` only: the session's tenant, when the caller knows it has a cap on inputs
   * running at once (`maxConcurrentInputs`). The store then goes straight to the capped take instead
   * of first trying the plain one, which refuses sessions of capped tenants anyway.
   */
  cappedTenant?: string;
  /**
   * `acquireLeaseAndClaim` only: the queue (`LOOPFLEET_QUEUE`) of the drain asking. A session of
   * another queue is refused with `session.queue_mismatch`, nothing written; one from before queues
   * were recorded (`''`) is claimed for it. Absent: any queue's session.
   */
  queue?: string;
}

/** The session's lease is free but its tenant runs as many inputs as its cap allows. */
export interface TenantAtCap {
  tenant: string;
  /** The tenant's `maxConcurrentInputs`. */
  limit: number;
}

/** The lease with its fencing token, or who holds it and when to try again. */
export type LeaseAcquisition =
  | { acquired: true; token: number; expiresAt: Date }
  | {
      acquired: false;
      /** The live holder's owner string (null if it released in the meantime). */
      holder: string | null;
      /** Milliseconds until the current lease lapses; 0 when it already has. */
      retryAfterMs: number;
      /**
       * `acquireLeaseAndClaim` only: set when the lease is free but the session's tenant already has
       * `limit` sessions holding a live lease (docs/tenant-limits.md). Nothing was taken or claimed.
       */
      atCap?: TenantAtCap;
    };

/** A heartbeat of a held lease. */
export interface RenewLeaseParams {
  sessionId: string;
  token: number;
  /** New lease length from now, in milliseconds. */
  ttlMs: number;
}

/** The lease to give up. */
export interface ReleaseLeaseParams {
  sessionId: string;
  token: number;
  /**
   * The holder published the `input_finished` event of every input it ended (and of any it found
   * owed): the session owes none, and the next drain need not check (see
   * {@link LeaseAndClaim}). Default false: what is owed stays owed.
   */
  finishesPublished?: boolean;
}


/** The input a drain runs next. */
export interface ClaimedInput {
  /** The input, now `running`, with `attempts` already counting this attempt. */
  input: InputRecord;
  /** True when it was already `running`: a previous holder died mid-run and this continues it. */
  resumed: boolean;
  /** True when it was `waiting` for child sessions and is `running` again: their results are in, or a cancel was asked for. */
  woken: boolean;
  /** The session as the claim left it (`running`), so the run needs no second read of it. */
  session: SessionRecord;
  /** Whether other inputs were `pending` as of the claim (see `StepCommitResult.pendingInputs`). */
  pendingInputs: boolean;
  /** Whether one of them would change the run (see `StepCommitResult.pendingSteers`). */
  pendingSteers: boolean;
}

/**
 * `acquireLeaseAndClaim`: the lease and the first input of the drain, taken in one
 * write, or who holds the lease and when to try again.
 */
export type LeaseAndClaim =
  | {
      acquired: true;
      token: number;
      expiresAt: Date;
      /**
       * The input claimed with the lease, or null when none was open. Undefined when one was open
       * but the write did not claim it: while `finishesOwed` it claims nothing (a claim counts an
       * attempt, so it waits for the drain's repair), and the input it saw may have been ended
       * meanwhile by the holder whose lease lapsed. The caller then claims
       * (`claimNextInput`) under `token`, after any repair, and releases the
       * lease if that fails.
       */
      claimed: ClaimedInput | null | undefined;
      /**
       * An input may have ended without its `input_finished` event (I6): an input ended since the
       * last release that said every finish was published (or the session predates the flag), and
       * the session has ended one at all. The drain then checks the stream before it claims or runs
       * anything; otherwise it need not.
       */
      finishesOwed: boolean;
      /**
       * The session's tenant when the lease was taken under its cap on inputs running at once: the
       * drain wakes one of the tenant's parked sessions when it releases the lease.
       */
      cappedTenant?: string;
    }
  | Extract<LeaseAcquisition, { acquired: false }>;
