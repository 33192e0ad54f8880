import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaseLostError } from '../../../src/core/errors/index.js';
import type { SessionStore } from '../../../src/core/ports/session-store.js';
import { keepLease } from '../../../src/worker/lease-keeper.js';

/** The lease heartbeat (docs/fleet.md) with a fake store and fake timers (the clock is `Date.now`, faked with them). */
describe('keepLease', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const TTL = 3_000;
  const storeWith = (renewLease: () => Promise<Date>) => ({ renewLease: vi.fn(renewLease) }) as unknown as SessionStore & { renewLease: ReturnType<typeof vi.fn> };

  it('a renewal that never settles: the run is aborted once a TTL passed without a successful renewal, though a renewal is in flight', async () => {
    vi.useFakeTimers();
    const store = storeWith(() => new Promise<never>(() => {}));
    const errors: unknown[] = [];
    const keeper = keepLease(store, 's1', 7, TTL, (error) => errors.push(error));
    try {
      // First tick (TTL / 3) sends the renewal that hangs; later ticks find it in flight.
      await vi.advanceTimersByTimeAsync(TTL - 1);
      expect(keeper.signal.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(TTL / 3);
      expect(keeper.signal.aborted).toBe(true);
      expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
      expect((keeper.signal.reason as LeaseLostError).message).toMatch(/lapsed/);
      // One renewal at a time: the hung one was never joined by another.
      expect(store.renewLease).toHaveBeenCalledTimes(1);
      expect(errors).toEqual([]);
    } finally {
      keeper.stop();
    }
  });

  it('counts the lease from when the lease was asked for (`since`), not from when the keeper started', async () => {
    vi.useFakeTimers();
    const store = storeWith(() => new Promise<never>(() => {}));
    // The acquisition was sent 2 s before the keeper started (a slow lease statement).
    const keeper = keepLease(store, 's1', 7, TTL, () => {}, { since: Date.now() - 2_000 });
    try {
      await vi.advanceTimersByTimeAsync(TTL / 3);
      expect(keeper.signal.aborted).toBe(true);
    } finally {
      keeper.stop();
    }
  });

  it('a slow renewal counts from when it was sent, not from when its answer came: failures after it abort a TTL after the send', async () => {
    vi.useFakeTimers();
    let calls = 0;
    // The first renewal, sent at TTL / 3, is answered just before TTL; every later one fails.
    const store = storeWith(() => {
      calls += 1;
      if (calls === 1) return new Promise<Date>((resolve) => setTimeout(() => resolve(new Date()), (2 * TTL) / 3 - 10));
      return Promise.reject(new Error('connection refused'));
    });
    const errors: unknown[] = [];
    const keeper = keepLease(store, 's1', 7, TTL, (error) => errors.push(error));
    try {
      // The renewal sent at TTL / 3 holds the lease until TTL / 3 + TTL = 4 TTL / 3 at the latest.
      await vi.advanceTimersByTimeAsync((4 * TTL) / 3 - 1);
      expect(keeper.signal.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(keeper.signal.aborted).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      keeper.stop();
    }
  });

  it('renewals that succeed keep the lease; a stale token aborts at once', async () => {
    vi.useFakeTimers();
    let stale = false;
    const store = storeWith(() => (stale ? Promise.reject(new LeaseLostError('taken')) : Promise.resolve(new Date())));
    const keeper = keepLease(store, 's1', 7, TTL, () => {});
    try {
      await vi.advanceTimersByTimeAsync(10 * TTL);
      expect(keeper.signal.aborted).toBe(false);
      stale = true;
      await vi.advanceTimersByTimeAsync(TTL / 3);
      expect(keeper.signal.aborted).toBe(true);
      expect((keeper.signal.reason as Error).message).toBe('taken');
    } finally {
      keeper.stop();
    }
  });
});
