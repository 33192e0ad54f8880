import { describe, expect, it, vi } from 'vitest';
import {
  CancelledError,
  LlmNonRetryableError,
  LlmRetryExhaustedError,
  LlmTimeoutError,
} from '../../../../src/core/errors/index.js';
import { resolveRetryPolicy, runWithRetry, type AttemptFailure, type RetryPolicy } from '../../../../src/core/retry/index.js';
import { ManualClock } from './manual-clock.js';

function httpError(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, headers });
}

const never = () => new Promise<never>(() => undefined);
const exactly = (ms: number) => (sleep: number) => sleep === ms;

/** A policy without deadline or jitter, so the only sleeps are backoffs of known length. */
function setup(policy: Partial<RetryPolicy> = {}) {
  const clock = new ManualClock();
  const failures: AttemptFailure[] = [];
  const controller = new AbortController();
  const options = {
    policy: resolveRetryPolicy({ totalTimeoutMs: null, jitter: 0, ...policy }),
    clock,
    signal: controller.signal,
    onAttemptFailed: (info: AttemptFailure) => failures.push(info),
  };
  return { clock, failures, controller, options };
}

describe('runWithRetry', () => {
  it('returns the first success without sleeping', async () => {
    const { clock, options } = setup({ totalTimeoutMs: 60_000 });
    const fn = vi.fn(async (attempt: number, signal: AbortSignal) => ({ attempt, aborted: signal.aborted }));
    await expect(runWithRetry(fn, options)).resolves.toEqual({ attempt: 1, aborted: false });
    expect(fn).toHaveBeenCalledTimes(1);
    expect(clock.sleeps).toEqual([]);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('retries retryable failures with doubling backoff, then succeeds', async () => {
    const { clock, failures, options } = setup();
    const fn = vi.fn(async (attempt: number) => {
      if (attempt < 3) throw httpError(503);
      return 'ok';
    });
    const run = runWithRetry(fn, options);
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await clock.nextSleep(exactly(1000));
    clock.advance(1000);
    await expect(run).resolves.toBe('ok');
    expect(fn.mock.calls.map(([attempt]) => attempt)).toEqual([1, 2, 3]);
    expect(failures.map(({ attempt, willRetry, delayMs }) => ({ attempt, willRetry, delayMs }))).toEqual([
      { attempt: 1, willRetry: true, delayMs: 500 },
      { attempt: 2, willRetry: true, delayMs: 1000 },
    ]);
  });

  it('gives each attempt its own signal', async () => {
    const { clock, options } = setup();
    const signals: AbortSignal[] = [];
    const run = runWithRetry(async (attempt, signal) => {
      signals.push(signal);
      if (attempt === 1) throw httpError(500);
      return 'ok';
    }, options);
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await run;
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
  });

  it('throws LlmNonRetryableError at once for a 4xx, with the original as cause', async () => {
    const { clock, failures, options } = setup();
    const original = httpError(401);
    const fn = vi.fn(async () => {
      throw original;
    });
    const error = await runWithRetry(fn, options).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmNonRetryableError);
    expect((error as Error).cause).toBe(original);
    expect((error as LlmNonRetryableError).details).toMatchObject({ attempts: 1, status: 401 });
    expect(fn).toHaveBeenCalledTimes(1);
    expect(clock.sleeps).toEqual([]);
    expect(failures).toMatchObject([{ attempt: 1, willRetry: false, delayMs: null }]);
  });

  it('passes an LlmNonRetryableError from the adapter through unwrapped', async () => {
    const { options } = setup();
    const original = new LlmNonRetryableError('balance');
    await expect(runWithRetry(async () => Promise.reject(original), options)).rejects.toBe(original);
  });

  it('throws LlmRetryExhaustedError after maxAttempts, with the last failure as cause', async () => {
    const { clock, failures, options } = setup({ maxAttempts: 3 });
    const errors = [httpError(500), httpError(502), httpError(429)];
    const run = runWithRetry(async (attempt) => {
      throw errors[attempt - 1];
    }, options).catch((caught: unknown) => caught);
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await clock.nextSleep(exactly(1000));
    clock.advance(1000);
    const error = await run;
    expect(error).toBeInstanceOf(LlmRetryExhaustedError);
    expect((error as Error).cause).toBe(errors[2]);
    expect((error as LlmRetryExhaustedError).details).toMatchObject({ attempts: 3 });
    expect(failures.map((failure) => failure.willRetry)).toEqual([true, true, false]);
  });

  it('makes exactly one attempt when maxAttempts is 1', async () => {
    const { options } = setup({ maxAttempts: 1 });
    const fn = vi.fn(async () => Promise.reject(httpError(500)));
    await expect(runWithRetry(fn, options)).rejects.toBeInstanceOf(LlmRetryExhaustedError);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('treats a synchronous throw as a failed attempt', async () => {
    const { clock, options } = setup();
    const run = runWithRetry((attempt) => {
      if (attempt === 1) throw new Error('sync boom');
      return Promise.resolve('ok');
    }, options);
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await expect(run).resolves.toBe('ok');
  });

  it('waits at least the retry-after the provider sent', async () => {
    const { clock, options } = setup();
    const run = runWithRetry(async (attempt) => {
      if (attempt === 1) throw httpError(429, { 'retry-after': '3' });
      return 'ok';
    }, options);
    await clock.nextSleep(exactly(3000));
    clock.advance(2999);
    expect(clock.pendingSleeps).toBe(1);
    clock.advance(1);
    await expect(run).resolves.toBe('ok');
  });

  it('applies jitter from the injected random source', async () => {
    const { clock, options } = setup({ jitter: 0.2 });
    const run = runWithRetry(async (attempt) => {
      if (attempt === 1) throw httpError(500);
      return 'ok';
    }, { ...options, random: () => 0 });
    await clock.nextSleep(exactly(400));
    clock.advance(400);
    await expect(run).resolves.toBe('ok');
  });

  it('fails with LlmTimeoutError at once when the retry-after reaches past the deadline', async () => {
    const { clock, failures, options } = setup({ totalTimeoutMs: 10_000 });
    const original = httpError(429, { 'retry-after': '30' });
    const error = await runWithRetry(async () => Promise.reject(original), options).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmTimeoutError);
    expect((error as Error).cause).toBe(original);
    expect(clock.sleeps).toEqual([]); // no pointless wait until the deadline
    expect(failures).toMatchObject([{ attempt: 1, willRetry: false }]);
  });

  it('fails with LlmTimeoutError when the backoff would pass the deadline', async () => {
    const { clock, options } = setup({ totalTimeoutMs: 1200 });
    const run = runWithRetry(async () => Promise.reject(httpError(500)), options).catch((caught: unknown) => caught);
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    const error = await run;
    expect(error).toBeInstanceOf(LlmTimeoutError);
    expect((error as LlmTimeoutError).details).toMatchObject({ attempts: 2, elapsedMs: 500, totalTimeoutMs: 1200 });
  });

  it('never cuts an attempt still running at the deadline: a long answer streams to its end', async () => {
    const { clock, failures, options } = setup({ totalTimeoutMs: 5000 });
    let attemptSignal: AbortSignal | undefined;
    let finish!: (value: string) => void;
    const run = runWithRetry((_attempt, signal) => {
      attemptSignal = signal;
      return new Promise<string>((resolve) => (finish = resolve));
    }, options);
    await vi.waitFor(() => expect(attemptSignal).toBeDefined());
    clock.advance(60_000);
    expect(attemptSignal?.aborted).toBe(false);
    finish('the long answer');
    await expect(run).resolves.toBe('the long answer');
    expect(clock.sleeps).toEqual([]);
    expect(failures).toEqual([]);
  });

  it('starts no attempt after the deadline: a failure past it ends the call with LlmTimeoutError, its cause', async () => {
    const { clock, failures, options } = setup({ totalTimeoutMs: 5000 });
    const stall = Object.assign(new Error('stalled'), { status: 503 });
    let fail!: (error: Error) => void;
    const fn = vi.fn((_attempt: number, _signal: AbortSignal) => new Promise<never>((_resolve, reject) => (fail = reject)));
    const run = runWithRetry(fn, options).catch((caught: unknown) => caught);
    await vi.waitFor(() => expect(fn).toHaveBeenCalledTimes(1));
    clock.advance(7000);
    fail(stall);
    const error = await run;
    expect(error).toBeInstanceOf(LlmTimeoutError);
    expect((error as Error).cause).toBe(stall);
    expect((error as LlmTimeoutError).details).toMatchObject({ attempts: 1, elapsedMs: 7000, totalTimeoutMs: 5000 });
    expect(fn).toHaveBeenCalledTimes(1);
    expect(clock.sleeps).toEqual([]);
    expect(failures).toMatchObject([{ attempt: 1, willRetry: false, error: stall }]);
  });

  it('throws CancelledError at once when cancelled mid-attempt, aborting the attempt', async () => {
    const { controller, failures, options } = setup();
    let attemptSignal: AbortSignal | undefined;
    let started!: () => void;
    const attemptStarted = new Promise<void>((resolve) => (started = resolve));
    const run = runWithRetry((_attempt, signal) => {
      attemptSignal = signal;
      started();
      return never();
    }, options).catch((caught: unknown) => caught);
    await attemptStarted;
    controller.abort();
    expect(await run).toBeInstanceOf(CancelledError);
    expect(attemptSignal?.aborted).toBe(true);
    expect(failures).toEqual([]);
  });

  it('throws CancelledError when cancelled during the backoff sleep, without another attempt', async () => {
    const { clock, controller, options } = setup();
    const fn = vi.fn(async () => Promise.reject(httpError(503)));
    const run = runWithRetry(fn, options).catch((caught: unknown) => caught);
    await clock.nextSleep(exactly(500));
    controller.abort(new CancelledError('user cancel'));
    const error = await run;
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as Error).message).toBe('user cancel');
    clock.advance(10_000);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('does not start when the signal is already aborted', async () => {
    const { controller, options } = setup();
    controller.abort();
    const fn = vi.fn(async () => 'ok');
    await expect(runWithRetry(fn, options)).rejects.toBeInstanceOf(CancelledError);
    expect(fn).not.toHaveBeenCalled();
  });

  it('never retries a CancelledError the call itself throws', async () => {
    const { options } = setup();
    const cancelled = new CancelledError('lease lost');
    const fn = vi.fn(async () => Promise.reject(cancelled));
    await expect(runWithRetry(fn, options)).rejects.toBe(cancelled);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('retries unknown errors (a broken classifier must not strand a session)', async () => {
    const { clock, options } = setup();
    const run = runWithRetry(async (attempt) => {
      if (attempt === 1) throw new Error('something odd');
      return 'ok';
    }, options);
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await expect(run).resolves.toBe('ok');
  });

  it('ignores a throwing onAttemptFailed listener', async () => {
    const { clock, options } = setup();
    const run = runWithRetry(async (attempt) => {
      if (attempt === 1) throw httpError(500);
      return 'ok';
    }, {
      ...options,
      onAttemptFailed: () => {
        throw new Error('listener bug');
      },
    });
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await expect(run).resolves.toBe('ok');
  });

  it('works without a signal or listener', async () => {
    const clock = new ManualClock();
    const policy = resolveRetryPolicy({ totalTimeoutMs: null, jitter: 0 });
    const run = runWithRetry(async (attempt) => (attempt === 1 ? Promise.reject(httpError(500)) : 'ok'), { policy, clock });
    await clock.nextSleep(exactly(500));
    clock.advance(500);
    await expect(run).resolves.toBe('ok');
  });
});
