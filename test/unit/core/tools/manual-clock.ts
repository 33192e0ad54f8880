import { abortReason, type Clock } from '../../../../src/core/ports/clock.js';

interface Sleeper {
  until: number;
  ms: number;
  resolve: () => void;
}

/**
 * A clock tests move by hand: `sleep` only resolves when `advance` passes its deadline, and
 * `whenSleeping` lets a test wait for code to reach its sleep instead of sleeping itself.
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];
  #watchers: { count: number; resolve: () => void }[] = [];

  constructor(startMs = Date.UTC(2025, 0, 2, 3, 4, 5, 678)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { until: this.#now + ms, ms, resolve };
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((other) => other !== sleeper);
          reject(abortReason(signal));
        },
        { once: true },
      );
      this.#sleepers.push(sleeper);
      this.#notify();
    });
  }

  /** Moves time forward and wakes every sleep whose deadline has passed. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((sleeper) => sleeper.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((sleeper) => sleeper.until > this.#now);
    for (const sleeper of due) sleeper.resolve();
  }

  /** Durations of the sleeps still pending, in the order they began. */
  pendingSleeps(): number[] {
    return this.#sleepers.map((sleeper) => sleeper.ms);
  }

  /** Resolves once at least `count` sleeps are pending. */
  whenSleeping(count = 1): Promise<void> {
    return new Promise((resolve) => {
      this.#watchers.push({ count, resolve });
      this.#notify();
    });
  }

  #notify(): void {
    const ready = this.#watchers.filter((watcher) => this.#sleepers.length >= watcher.count);
    this.#watchers = this.#watchers.filter((watcher) => !ready.includes(watcher));
    for (const watcher of ready) watcher.resolve();
  }
}
