import { InfrastructureError, isLoopfleetError } from '../errors/index.js';
import type { SessionStore } from '../ports/session-store.js';

/**
 * The store as the loop sees it: any failure that is not one of loopfleet's typed errors (a dropped
 * connection, an exhausted pool, a failed COMMIT) becomes a retryable `InfrastructureError`. The loop
 * does not turn those into a `failed` input — the step did not happen, so the run stops and the input
 * stays `running` for the next attempt (BullMQ retry or the sweeper) to continue, instead of a
 * transient database fault failing a user's input for good.
 */
export function guardStore(store: SessionStore): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch((error: unknown) => {
          if (isLoopfleetError(error)) throw error;
          throw new InfrastructureError(`store ${String(property)} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        });
    },
  });
}
