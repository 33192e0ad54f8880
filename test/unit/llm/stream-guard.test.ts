import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StreamGuard } from '../../../src/llm/stream-guard.js';

describe('StreamGuard', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires only after idleTimeoutMs without a chunk; each chunk restarts the wait', () => {
    const guard = new StreamGuard(new AbortController().signal, 100);
    guard.watchIdle();
    vi.advanceTimersByTime(80);
    guard.touch();
    vi.advanceTimersByTime(80);
    guard.touch();
    vi.advanceTimersByTime(99);
    expect(guard.stalled).toBe(false);
    expect(guard.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(guard.stalled).toBe(true);
    expect(guard.signal.aborted).toBe(true);
    guard.dispose(false);
  });

  it('measures silence on the monotonic clock: a wall-clock step neither stalls a live stream nor holds a dead one', () => {
    const live = new StreamGuard(new AbortController().signal, 100);
    live.watchIdle();
    vi.advanceTimersByTime(60);
    live.touch();
    vi.setSystemTime(Date.now() + 3_600_000);
    vi.advanceTimersByTime(60);
    expect(live.stalled).toBe(false);
    live.dispose(true);

    const dead = new StreamGuard(new AbortController().signal, 100);
    dead.watchIdle();
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(100);
    expect(dead.stalled).toBe(true);
    dead.dispose(false);
  });

  it('endWithin: once the answer is whole, the rest of the body gets the grace in total, however it trickles', () => {
    const guard = new StreamGuard(new AbortController().signal, 10_000);
    guard.watchIdle();
    guard.endWithin(50);
    guard.endWithin(5_000);
    for (let elapsed = 0; elapsed < 49; elapsed += 7) {
      vi.advanceTimersByTime(7);
      guard.touch();
    }
    expect(guard.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(guard.stalled).toBe(true);
    expect(guard.signal.aborted).toBe(true);
    guard.dispose(true);

    const ended = new StreamGuard(new AbortController().signal, 10_000);
    ended.watchIdle();
    ended.endWithin(50);
    ended.dispose(true);
    vi.advanceTimersByTime(1_000);
    expect(ended.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not watch before watchIdle (the SDK times the headers)', () => {
    const guard = new StreamGuard(new AbortController().signal, 100);
    vi.advanceTimersByTime(1000);
    expect(guard.stalled).toBe(false);
    guard.dispose(true);
  });

  it('follows the caller signal, with its reason, and is not "stalled" then', () => {
    const caller = new AbortController();
    const guard = new StreamGuard(caller.signal, 100);
    caller.abort('stop');
    expect(guard.signal.aborted).toBe(true);
    expect(guard.signal.reason).toBe('stop');
    expect(guard.stalled).toBe(false);
    guard.dispose(false);
  });

  it('dispose: aborts an unfinished request, leaves a completed one alone, stops the timer and the caller link', () => {
    const caller = new AbortController();
    const unfinished = new StreamGuard(caller.signal, 100);
    unfinished.dispose(false);
    expect(unfinished.signal.aborted).toBe(true);

    const completed = new StreamGuard(caller.signal, 100);
    completed.watchIdle();
    completed.dispose(true);
    vi.advanceTimersByTime(1000);
    caller.abort();
    expect(completed.signal.aborted).toBe(false);
    expect(completed.stalled).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
