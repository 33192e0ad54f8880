/**
 * The event-loop watchdog's period and lifecycle. Its kill — a process whose loop a tool blocks for
 * good — is exercised with real worker processes: integration/fleet/worker-blocked.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { startEventLoopWatchdog, watchdogTickMs } from '../../../src/worker/event-loop-watchdog.js';

describe('watchdogTickMs', () => {
  it.each([
    [1_000, 100],
    [3_000, 300],
    [30_000, 1_000],
    [3_600_000, 1_000],
  ])('a bound of %i ms checks every %i ms: ten checks within the bound, at most one a second', (boundMs, tickMs) => {
    expect(watchdogTickMs(boundMs)).toBe(tickMs);
  });
});

describe('startEventLoopWatchdog', () => {
  it('runs beside a main thread that keeps turning, and stops (twice the same stop) without an error', async () => {
    const errors: Error[] = [];
    // The thread runs in this test process: a bound a loaded machine could stall the main thread for
    // would SIGKILL the test runner itself (a short bound's kill is tested in a worker process:
    // test/integration/fleet/worker-blocked.test.ts).
    const watchdog = startEventLoopWatchdog({ boundMs: 20_000, workerId: 'unit', variable: 'WORKER_BLOCKED_EXIT_MS', onError: (error) => errors.push(error) });
    expect(watchdog.tickMs).toBe(1_000);
    // Several of the thread's checks pass while this loop turns: still alive to stop it.
    const until = Date.now() + 2.5 * watchdog.tickMs;
    while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    await Promise.all([watchdog.stop(), watchdog.stop()]);
    expect(errors).toEqual([]);
  });
});
