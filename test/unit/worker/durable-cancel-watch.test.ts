import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchDurableCancel } from '../../../src/worker/run-claimed-input.js';
import type { WorkerContext } from '../../../src/worker/worker-context.js';

/** The re-read of a run's durable cancel flag (every third of the lease), with a fake store. */
describe('watchDurableCancel', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const context = (getSession: () => Promise<unknown>) =>
    ({ store: { getSession }, logger: { warn: () => {} }, settings: { leaseTtlMs: 3_000 } }) as unknown as WorkerContext;

  it('reads one at a time: while Postgres hangs, reads do not pile up', async () => {
    vi.useFakeTimers();
    const getSession = vi.fn(() => new Promise<never>(() => {}));
    const stop = watchDurableCancel(context(getSession), 's1', new Date(0), new AbortController());
    await vi.advanceTimersByTimeAsync(10_000);
    stop();
    expect(getSession).toHaveBeenCalledTimes(1);
  });

  it('aborts the run once the flag was set after it started, and reads again after each answer', async () => {
    vi.useFakeTimers();
    const startedAt = new Date(1_000);
    const answers = [{ cancelRequestedAt: null }, { cancelRequestedAt: new Date(500) }, { cancelRequestedAt: new Date(2_000) }];
    const getSession = vi.fn(async () => answers.shift() ?? null);
    const cancel = new AbortController();
    const stop = watchDurableCancel(context(getSession), 's1', startedAt, cancel);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(cancel.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    stop();
    expect(getSession).toHaveBeenCalledTimes(3);
    expect(cancel.signal.aborted).toBe(true);
  });
});
