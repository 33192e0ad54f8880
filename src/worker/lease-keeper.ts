import { LeaseLostError } from '../core/errors/index.js';
import type { FleetStore } from '../core/ports/fleet-store.js';

export interface LeaseKeeper {
  /** Aborted with a `LeaseLostError` when a renewal finds the lease taken, or none succeeded for a TTL. */
  signal: AbortSignal;
  stop(): void;
}

export interface KeepLeaseOptions {
  /** When the request that took the lease was sent (ms, `now`'s clock). Default: now. */
  since?: number;
  /** The clock the lapse is judged on. Default `Date.now`. */
  now?: () => number;
}

/**
 * Heartbeat of a held lease: renews every `ttlMs / 3` on database time. When a renewal says the token
 * is stale, or no renewal has succeeded for a TTL, the run is aborted: another worker may own the
 * session now, and every later write would be rejected anyway (I3).
 *
 * The lease runs a TTL from a successful renewal's (or the acquisition's) arrival at the database,
 * which is no earlier than when it was sent: so the keeper counts from the send, and checks on every
 * tick — also while a renewal is still in flight, since one that never settles (a hung connection)
 * must not keep a run going past its lease.
 */
export function keepLease(
  store: FleetStore,
  sessionId: string,
  token: number,
  ttlMs: number,
  onError: (error: unknown) => void,
  options: KeepLeaseOptions = {},
): LeaseKeeper {
  const now = options.now ?? Date.now;
  const controller = new AbortController();
  /** Send time of the last renewal that succeeded (at first, of the acquisition). */
  let renewedAt = options.since ?? now();
  let stopped = false;
  let inFlight = false;
  const lapsed = (cause?: unknown): boolean => {
    if (now() - renewedAt < ttlMs) return false;
    controller.abort(new LeaseLostError(`lease of ${sessionId} lapsed: no renewal succeeded for ${ttlMs} ms`, cause === undefined ? {} : { cause }));
    return true;
  };
  const timer = setInterval(() => {
    if (stopped || controller.signal.aborted || lapsed() || inFlight) return;
    inFlight = true;
    const sentAt = now();
    store
      .renewLease({ sessionId, token, ttlMs })
      .then(() => {
        renewedAt = Math.max(renewedAt, sentAt);
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        if (error instanceof LeaseLostError) return controller.abort(error);
        onError(error);
        // A database outage: once the lease must have lapsed, assume it is lost.
        lapsed(error);
      })
      .finally(() => {
        inFlight = false;
      });
  }, Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref();
  return {
    signal: controller.signal,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
