import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { boundWhileStopping, STOPPING_REDIS_WAIT_MS, StoppingWaitCutShortError } from '../../../src/worker/stopping-wait.js';

function signals() {
  const stopping = new AbortController();
  const shutdown = new AbortController();
  return { stopping, shutdown, both: { stopping: stopping.signal, shutdown: shutdown.signal } };
}

const never = <T>(): Promise<T> => new Promise<T>(() => {});

describe('boundWhileStopping', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('passes a wait through unchanged while the worker runs, however long', async () => {
    vi.useFakeTimers();
    const { both } = signals();
    let settle!: (value: string) => void;
    const wait = boundWhileStopping(both, new Promise<string>((resolve) => (settle = resolve)), 'kick');
    await vi.advanceTimersByTimeAsync(10 * STOPPING_REDIS_WAIT_MS);
    settle('id-1');
    await expect(wait).resolves.toBe('id-1');
  });

  it('gives a wait the bound from the moment stopping begins, then cuts it short', async () => {
    vi.useFakeTimers();
    const { stopping, both } = signals();
    const wait = boundWhileStopping(both, never<string>(), 'input_finished publish');
    const outcome = wait.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(5 * STOPPING_REDIS_WAIT_MS);
    stopping.abort();
    await vi.advanceTimersByTimeAsync(STOPPING_REDIS_WAIT_MS - 1);
    let done = false;
    void outcome.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBeInstanceOf(StoppingWaitCutShortError);
  });

  it('cuts a wait short at once when the stop is forced, and keeps a value that arrived first', async () => {
    const { stopping, shutdown, both } = signals();
    const cut = boundWhileStopping(both, never<string>(), 'hand-back kick');
    const settled = boundWhileStopping(both, Promise.resolve('kept'), 'yield kick');
    stopping.abort();
    shutdown.abort();
    await expect(cut).rejects.toBeInstanceOf(StoppingWaitCutShortError);
    await expect(settled).resolves.toBe('kept');
    // Started after the force: no time at all.
    await expect(boundWhileStopping(both, never<string>(), 'late')).rejects.toBeInstanceOf(StoppingWaitCutShortError);
  });

  it('adds no listener per wait to the worker signals', async () => {
    const { both } = signals();
    const waits = Array.from({ length: 500 }, (_, i) => boundWhileStopping(both, Promise.resolve(i), 'flush'));
    expect(getEventListeners(both.stopping, 'abort')).toHaveLength(1);
    expect(getEventListeners(both.shutdown, 'abort')).toHaveLength(1);
    expect(await Promise.all(waits)).toHaveLength(500);
  });
});
