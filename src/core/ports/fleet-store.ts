import type { ChildResultPayload } from './children.js';
import type {
  AcquireLeaseParams,
  ChildDelivery,
  ClaimedInput,
  FencedParams,
  LeaseAcquisition,
  LeaseAndClaim,
  ReleaseLeaseParams,
  RenewLeaseParams,
  SpawnChildParams,
  SpawnChildResult,
} from './store-records.js';

/**
 * The store as a worker's drain holds a session: the lease with its fencing token, the claim of the
 * next input, the cancel flag. Every method may also throw `session.invalid_id`.
 */
export interface FleetStore {
  /**
   * Takes the lease if it is free or lapsed, with a new fencing token: positive, greater than every
   * token the session id had before, and never reused for it, even after the session is deleted and
   * created again (tokens are not consecutive). `session.not_found` if none.
   */
  acquireLease(params: AcquireLeaseParams): Promise<LeaseAcquisition>;
  /** Extends the lease; returns the new expiry. `lease.lost` if the token is no longer current. */
  renewLease(params: RenewLeaseParams): Promise<Date>;
  /** Gives the lease up. False (never an error) when the token is stale or already released. */
  releaseLease(params: ReleaseLeaseParams): Promise<boolean>;

  /**
   * {@link acquireLease} and, when it is acquired, {@link claimNextInput} under the new token — one
   * atomic write instead of two round trips at the start of every drain. It claims nothing while a
   * finish may be owed (see {@link LeaseAndClaim}).
   */
  acquireLeaseAndClaim(params: AcquireLeaseParams): Promise<LeaseAndClaim>;

  /**
   * Fenced. Marks the lowest open input `running` and returns it, or null when none is open (an
   * input accepted while the claim runs may be left for the next one). Writes nothing when none is.
   */
  claimNextInput(params: FencedParams): Promise<ClaimedInput | null>;
  /** Fenced. Clears the cancel flag once the holder has acted on it. */
  clearCancel(params: FencedParams): Promise<void>;
  /**
   * The session's durable cancel request: when it was made, or null when none waits (or there is no
   * such session). One narrow read, for a holder told over Redis that a cancel may have been asked
   * for: the message proves nothing, the request in the store does.
   */
  readCancelRequest(sessionId: string): Promise<Date | null>;

  /**
   * Fenced by the parent's lease. Creates the child session (parent, root, depth, the spawning call)
   * and its first input, a `send` of `task`, in one statement — or finds them: the child id is
   * derived from the call, so a repeated call creates nothing. Refuses when the parent input already
   * has `maxChildrenPerInput` children.
   */
  spawnChild(params: SpawnChildParams): Promise<SpawnChildResult>;
  /**
   * A child's input ended: its outcome joins the parent's inbox, once (input id
   * `child:<toolCallId>`). For a waiting call it is `done` at once, steered into the parent input it
   * answers, and only while that input is open (`running` or `waiting`); for a `wait: false` call it
   * is a pending `steer` input. Null when nothing was written: not a child, already delivered, or no
   * longer wanted.
   */
  deliverChildResult(childSessionId: string, payload: ChildResultPayload): Promise<ChildDelivery | null>;
}
