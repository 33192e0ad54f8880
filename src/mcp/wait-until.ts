/**
 * Waits for `promise`, at most until `deadline` (milliseconds since the epoch) and no longer than
 * `signal` stays unaborted. Rejects with `timeoutError()` at the deadline and with the signal's reason
 * on abort; the timer and the listener are removed either way.
 */
export function waitUntil<T>(promise: Promise<T>, signal: AbortSignal, deadline: number, timeoutError: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => finish(() => reject(timeoutError())), Math.max(0, deadline - Date.now()));
    const onAbort = (): void => finish(() => reject(signal.reason as Error));
    signal.addEventListener('abort', onAbort, { once: true });
    function finish(settle: () => void): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      settle();
    }
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error as Error)),
    );
  });
}
