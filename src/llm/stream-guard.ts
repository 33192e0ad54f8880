import { MAX_TIMER_MS } from '../core/ports/clock.js';

/**
 * The abort signal handed to an SDK for one streaming call (both adapters use it): it follows the
 * caller's signal, and also fires when the stream stalls — no activity for `idleTimeoutMs`.
 *
 * The SDKs' own `timeout` only covers the wait for the response headers; once a stream has started,
 * a server that stops sending would hold the call (and the session's lease) for good: the retry
 * policy's total deadline bounds retrying, never a running attempt (`run-with-retry.ts`). One timer
 * per call, re-armed only when it fires: a chunk costs a `performance.now()`, not a timer. The clock
 * is the monotonic one: a step of the wall clock (NTP, a VM resumed) neither cuts a live stream nor
 * holds a dead one.
 */
export class StreamGuard {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal;
  readonly #idleTimeoutMs: number;
  readonly #onCallerAbort = () => this.#controller.abort(this.#caller.reason);
  #lastActivity = 0;
  #timer: NodeJS.Timeout | null = null;
  #stalled = false;

  constructor(caller: AbortSignal, idleTimeoutMs: number) {
    this.#caller = caller;
    this.#idleTimeoutMs = idleTimeoutMs;
    if (caller.aborted) this.#onCallerAbort();
    else caller.addEventListener('abort', this.#onCallerAbort, { once: true });
  }

  /** The signal for the SDK request. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once the idle timeout fired (as opposed to the caller aborting). */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** Starts the idle watch; call when the response headers have arrived. */
  watchIdle(): void {
    this.#lastActivity = performance.now();
    this.#schedule(this.#idleTimeoutMs);
  }

  /** A chunk arrived. Cheap: it only stamps the time; the timer re-arms itself when it fires. */
  touch(): void {
    this.#lastActivity = performance.now();
  }

  /** Stops watching; aborts the request unless it completed, so an abandoned stream frees its socket. */
  dispose(completed: boolean): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#caller.removeEventListener('abort', this.#onCallerAbort);
    if (!completed && !this.#controller.signal.aborted) this.#controller.abort();
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => this.#check(), Math.min(delayMs, MAX_TIMER_MS));
  }

  #check(): void {
    const idleMs = performance.now() - this.#lastActivity;
    if (idleMs < this.#idleTimeoutMs) {
      this.#schedule(this.#idleTimeoutMs - idleMs);
      return;
    }
    this.#timer = null;
    this.#stalled = true;
    this.#controller.abort();
  }
}
