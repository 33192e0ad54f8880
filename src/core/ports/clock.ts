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
  /**
   * Optional: calls `fire` after `ms` unless the returned function is called first. Guard timers (an
   * LLM call's deadline, a tool's timeout), which are nearly always stopped, use it to skip an
   * `AbortController` per call; a clock without it gets guards built on `sleep`.
   */
  timer?(ms: number, fire: () => void): () => void;
}

/** The longest delay Node's timers honour: `setTimeout` fires at once for anything longer (2^31 - 1 ms, ≈ 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

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
  timer: (ms, fire) => {
    const timer = setTimeout(fire, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
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

/**
 * Starts a guard timer: `fire` runs after `ms` unless the returned function stops it first (the race
 * it guards was decided). Uses the clock's `timer` when it has one, else a `sleep` stopped through
 * an `AbortController` (with {@link GUARD_STOPPED}), so a manual clock drives guards like any sleep.
 */
export function startGuardTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.timer !== undefined) return clock.timer(ms, fire);
  const control = new AbortController();
  clock.sleep(ms, control.signal).then(fire, () => undefined);
  return () => control.abort(GUARD_STOPPED);
}
