import { CancelledError } from '../errors/index.js';

/**
 * Time, as a port: the loop never reads the wall clock or sleeps directly, so tests drive it with a
 * manual clock and backoff never makes a test slow.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with `CancelledError` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) return reject(abortReason(signal));
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** The error a cancelled wait rejects with: the signal's reason when it is already typed. */
export function abortReason(signal: AbortSignal): CancelledError {
  const reason: unknown = signal.reason;
  if (reason instanceof CancelledError) return reason;
  return new CancelledError(typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : 'cancelled', {
    cause: reason,
  });
}

/**
 * The reason a guard timer (a deadline or timeout `sleep` raced against the real work) is stopped
 * with once the race is decided. Shared and typed, so stopping one — on every LLM call and tool call —
 * allocates neither a `DOMException` nor an error with a stack; nobody observes it.
 */
const GUARD_STOPPED = new CancelledError('guard timer stopped: the race it guarded was decided');

/** Stops a guard timer's `sleep` (see {@link GUARD_STOPPED}). */
export function stopGuardTimer(controller: AbortController): void {
  controller.abort(GUARD_STOPPED);
}
