import { afterEach, describe, expect, it, vi } from 'vitest';
import { startGuardTimer, systemClock, type Clock } from '../../../src/core/ports/clock.js';
import { ManualClock } from './retry/manual-clock.js';

describe('startGuardTimer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('on the system clock: fires once after its time, and never once stopped', () => {
    vi.useFakeTimers();
    const fired: string[] = [];
    startGuardTimer(systemClock, 100, () => fired.push('a'));
    const stop = startGuardTimer(systemClock, 100, () => fired.push('b'));
    vi.advanceTimersByTime(99);
    stop();
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual(['a']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('on a clock without `timer`: a sleep the clock drives, aborted (nothing left pending) once stopped', async () => {
    const manual = new ManualClock();
    const clock: Clock = { now: () => manual.now(), sleep: (ms, signal) => manual.sleep(ms, signal) };
    const fired: string[] = [];
    startGuardTimer(clock, 50, () => fired.push('a'));
    const stop = startGuardTimer(clock, 50, () => fired.push('b'));
    expect(manual.pendingSleeps).toBe(2);
    stop();
    expect(manual.pendingSleeps).toBe(1);
    manual.advance(50);
    await vi.waitFor(() => expect(fired).toEqual(['a']));
    expect(manual.pendingSleeps).toBe(0);
  });
});
