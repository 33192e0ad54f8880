/** How a server that exited is started again. Milliseconds. */
export interface RestartBackoffOptions {
  /** The first wait after an exit. Default 500. */
  initialMs: number;
  /** The longest wait: the wait doubles up to it. Default 30000. */
  maxMs: number;
  /** A server up at least this long counts as stable: its next exit waits `initialMs` again. Default 60000. */
  stableMs: number;
}

export const DEFAULT_RESTART_BACKOFF: Readonly<RestartBackoffOptions> = Object.freeze({ initialMs: 500, maxMs: 30_000, stableMs: 60_000 });

/**
 * Exponential backoff between restarts: `initialMs`, doubling to `maxMs`, back to `initialMs` once a
 * connection has stayed up `stableMs`. Times are passed in, so it holds no clock.
 */
export class RestartBackoff {
  readonly #options: RestartBackoffOptions;
  #next: number;
  #upSince: number | null = null;

  constructor(options: RestartBackoffOptions = DEFAULT_RESTART_BACKOFF) {
    this.#options = options;
    this.#next = options.initialMs;
  }

  /** A connection came up at `now`. */
  up(now: number): void {
    this.#upSince = now;
  }

  /** The connection was lost, or a start failed, at `now`: how long to wait before the next start. */
  nextDelay(now: number): number {
    if (this.#upSince !== null && now - this.#upSince >= this.#options.stableMs) this.#next = this.#options.initialMs;
    this.#upSince = null;
    const delay = this.#next;
    this.#next = Math.min(this.#options.maxMs, this.#next * 2);
    return delay;
  }
}
