import { LeaseLostError } from '../core/errors/index.js';
import type { SessionStore } from '../core/ports/session-store.js';

export interface LeaseKeeper {
  /** Aborted with a `LeaseLostError` when a renewal finds the lease taken (or keeps failing). */
  signal: AbortSignal;
  stop(): void;
}

/**
 * Heartbeat of a held lease: renews every `ttlMs / 3` on database time. When a renewal says the token
 * is stale, or renewals keep failing until the lease must have lapsed, the run is aborted: another
 * worker may own the session now, and every later write would be rejected anyway (DESIGN.md §4.3).
 */
export function keepLease(store: SessionStore, sessionId: string, token: number, ttlMs: number, onError: (error: unknown) => void): LeaseKeeper {
  const controller = new AbortController();
  let lastRenewed = Date.now();
  let stopped = false;
  let inFlight = false;
  const timer = setInterval(() => {
    if (stopped || inFlight) return;
    inFlight = true;
    store
      .renewLease({ sessionId, token, ttlMs })
      .then(() => {
        lastRenewed = Date.now();
      })
      .catch((error: unknown) => {
        if (error instanceof LeaseLostError) return controller.abort(error);
        onError(error);
        // A database outage: once the lease must have lapsed, assume it is lost.
        if (Date.now() - lastRenewed >= ttlMs) controller.abort(new LeaseLostError(`lease of ${sessionId} lapsed while renewals failed`, { cause: error }));
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
