import { MAX_TIMER_MS } from '../core/ports/clock.js';

/** How long the rest of a body is read once the answer is whole, before the request is cut ({@link StreamGuard.endWithin}). */
export const END_OF_ANSWER_GRACE_MS = 1_000;

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
  #ending = false;

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

  /**
   * The answer is whole (`[DONE]`, `message_stop`): the rest of the body is still read, so the
   * connection can be reused, but for `graceMs` at most (capped at the idle timeout), however it
   * trickles; then the request is aborted, as a stall, which the caller knows to shrug off now.
   */
  endWithin(graceMs: number): void {
    if (this.#ending || this.#controller.signal.aborted) return;
    this.#ending = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#stall(), Math.min(graceMs, this.#idleTimeoutMs));
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
    this.#stall();
  }

  #stall(): void {
    this.#timer = null;
    this.#stalled = true;
    this.#controller.abort();
  }
}
