import type { Clock } from '../../../../src/core/ports/clock.js';
import { abortReason } from '../../../../src/core/ports/clock.js';

interface Sleeper {
  dueAt: number;
  ms: number;
  resolve: () => void;
}

/**
 * A clock that only moves when the test says so. `sleep` parks until `advance` passes its due time;
 * `nextSleep` lets a test wait — on an event, not on time — until the code under test starts sleeping.
 */
export class ManualClock implements Clock {
  private current: number;
  private readonly sleepers = new Set<Sleeper>();
  private waiters: { match: (ms: number) => boolean; resolve: (ms: number) => void }[] = [];
  /** Every sleep ever requested, in order, in milliseconds. */
  readonly sleeps: number[] = [];

  constructor(start = 1_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = {
        dueAt: this.current + Math.max(0, ms),
        ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers.delete(sleeper);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.add(sleeper);
      this.notifyWaiters(ms);
    });
  }

  /** Moves time forward, waking every sleeper that is due, earliest first. */
  advance(ms: number): void {
    this.current += ms;
    const due = [...this.sleepers].filter((sleeper) => sleeper.dueAt <= this.current).sort((a, b) => a.dueAt - b.dueAt);
    for (const sleeper of due) {
      this.sleepers.delete(sleeper);
      sleeper.resolve();
    }
  }

  /** Resolves with the duration of the next sleep matching `match` (also one already pending). */
  nextSleep(match: (ms: number) => boolean = () => true): Promise<number> {
    const pending = [...this.sleepers].find((sleeper) => match(sleeper.ms));
    if (pending !== undefined) return Promise.resolve(pending.ms);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** How many sleeps are parked right now. */
  get pendingSleeps(): number {
    return this.sleepers.size;
  }

  private notifyWaiters(ms: number): void {
    const ready = this.waiters.filter((waiter) => waiter.match(ms));
    this.waiters = this.waiters.filter((waiter) => !waiter.match(ms));
    for (const waiter of ready) waiter.resolve(ms);
  }
}
