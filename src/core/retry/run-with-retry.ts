/**
 * Runs one LLM call under the retry policy: classified retries with backoff, jitter
 * and `retry-after`, one total deadline, and cancellation that takes effect at once — during an
 * attempt and during the backoff sleep (docs/llm-providers.md).
 *
 * The total deadline bounds retrying: no attempt starts, and no backoff sleep runs, past it. It never
 * cuts an attempt short: a long answer still streaming at the deadline is a healthy call, and cutting
 * it failed every reply that took longer than the deadline to stream. An attempt's own time is bounded
 * by the `Llm` — the adapters limit the wait for the response to begin and every pause in the stream
 * (`LLM_REQUEST_TIMEOUT_MS`, `src/llm/stream-guard.ts`) — and by cancellation.
 */
import { LlmNonRetryableError, LlmRetryExhaustedError, LlmTimeoutError } from '../errors/index.js';
import { abortReason, type Clock } from '../ports/clock.js';
import { backoffDelayMs } from './backoff-delay.js';
import { classifyLlmError, type LlmErrorClassification } from './classify-llm-error.js';
import { retryAfterMs } from './retry-after.js';
import type { RetryPolicy } from './retry-policy.js';

/** What {@link RunWithRetryOptions.onAttemptFailed} is told about a failed attempt. */
export interface AttemptFailure {
  /** 1-based. */
  attempt: number;
  /** What the attempt threw. */
  error: unknown;
  classification: LlmErrorClassification;
  /** Whether another attempt follows. */
  willRetry: boolean;
  /** The wait before the next attempt, in milliseconds; null when none follows. */
  delayMs: number | null;
}

/** Options of {@link runWithRetry}. */
export interface RunWithRetryOptions {
  policy: RetryPolicy;
  /** Time and sleeping; a manual clock in tests. */
  clock: Clock;
  /** Cancels the whole call: the running attempt is aborted and `CancelledError` thrown at once. */
  signal?: AbortSignal;
  /** Uniform random numbers in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
  /**
   * Called after every failed attempt, before the wait; for events, metrics and logs. A throwing
   * listener is ignored: a listener bug must not change what the call does.
   */
  onAttemptFailed?(info: AttemptFailure): void;
}

/** A function to run: receives the 1-based attempt number and a signal aborted on cancel. */
export type RetryableCall<T> = (attempt: number, signal: AbortSignal) => Promise<T>;

type AttemptOutcome<T> = { kind: 'ok'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'cancelled'; error: Error };

/** Shared by the helpers below for one call. */
interface RetryRun {
  options: RunWithRetryOptions;
  startedAt: number;
  /** Absolute deadline in clock milliseconds, or null. */
  deadline: number | null;
}

/**
 * Calls `fn` until it succeeds or the policy gives up. Throws:
 * - `CancelledError` as soon as `signal` aborts (or when `fn` itself throws one): never retried;
 * - `LlmNonRetryableError` (cause: the original) at once for a non-retryable failure;
 * - `LlmRetryExhaustedError` (cause: the last failure, `details.attempts`) after `maxAttempts`;
 * - `LlmTimeoutError` (cause: the last failure) when an attempt fails and the total deadline has
 *   passed — or would pass during the wait before the next one, so a long `retry-after` fails now
 *   instead of sleeping until the deadline to fail then. An attempt running at the deadline is not
 *   aborted: see the module comment.
 */
export async function runWithRetry<T>(fn: RetryableCall<T>, options: RunWithRetryOptions): Promise<T> {
  const startedAt = options.clock.now();
  const total = options.policy.totalTimeoutMs;
  const run: RetryRun = { options, startedAt, deadline: total === null ? null : startedAt + total };
  let lastError: unknown;
  for (let attempt = 1; ; attempt += 1) {
    if (options.signal?.aborted === true) throw abortReason(options.signal);
    // The sleep was shorter than the time left, but a real clock may still overshoot the deadline.
    if (run.deadline !== null && options.clock.now() >= run.deadline) throw timeoutError(run, attempt - 1, lastError);
    const outcome = await runAttempt(fn, attempt, run);
    if (outcome.kind === 'ok') return outcome.value;
    if (outcome.kind === 'cancelled') throw outcome.error;
    lastError = outcome.error;
    const delayMs = nextDelay(outcome.error, attempt, run);
    if (delayMs > 0) await sleepOrCancel(delayMs, run);
  }
}

/**
 * One attempt, raced against cancellation so a call that ignores its signal cannot hold a cancelled
 * run. Not raced against the deadline: see the module comment.
 */
function runAttempt<T>(fn: RetryableCall<T>, attempt: number, run: RetryRun): Promise<AttemptOutcome<T>> {
  const { signal } = run.options;
  const controller = new AbortController();
  return new Promise<AttemptOutcome<T>>((resolve) => {
    let settled = false;
    const settle = (outcome: AttemptOutcome<T>) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onCancel);
      resolve(outcome);
    };
    const onCancel = () => {
      const reason = abortReason(signal!);
      controller.abort(reason);
      settle({ kind: 'cancelled', error: reason });
    };
    signal?.addEventListener('abort', onCancel, { once: true });
    invoke(fn, attempt, controller.signal).then(
      (value) => settle({ kind: 'ok', value }),
      (error: unknown) => settle(signal?.aborted === true ? { kind: 'cancelled', error: abortReason(signal) } : { kind: 'failed', error }),
    );
  });
}

/** A synchronous throw from `fn` is a failed attempt like any other. */
function invoke<T>(fn: RetryableCall<T>, attempt: number, signal: AbortSignal): Promise<T> {
  try {
    return Promise.resolve(fn(attempt, signal));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The wait before the next attempt, or throws the error that ends the call. */
function nextDelay(error: unknown, attempt: number, run: RetryRun): number {
  const { options } = run;
  const classification = classifyLlmError(error);
  if (classification.reason === 'cancelled') throw error;
  const giveUp = (final: Error): never => {
    notify(run, { attempt, error, classification, willRetry: false, delayMs: null });
    throw final;
  };
  if (!classification.retryable) giveUp(nonRetryableError(error, attempt, classification));
  if (attempt >= options.policy.maxAttempts) giveUp(exhaustedError(error, attempt, classification));
  const now = options.clock.now();
  const remainingMs = run.deadline === null ? null : run.deadline - now;
  const delayMs = backoffDelayMs(options.policy, {
    retry: attempt,
    random: options.random ?? Math.random,
    retryAfterMs: retryAfterMs(error, now),
    remainingMs,
  });
  if (remainingMs !== null && delayMs >= remainingMs) giveUp(timeoutError(run, attempt, error));
  notify(run, { attempt, error, classification, willRetry: true, delayMs });
  return delayMs;
}

async function sleepOrCancel(delayMs: number, run: RetryRun): Promise<void> {
  const { clock, signal } = run.options;
  try {
    await clock.sleep(delayMs, signal);
  } catch (error) {
    if (signal?.aborted === true) throw abortReason(signal);
    throw error;
  }
}

function notify(run: RetryRun, info: AttemptFailure): void {
  try {
    run.options.onAttemptFailed?.(info);
  } catch {
    // Deliberately ignored: see RunWithRetryOptions.onAttemptFailed.
  }
}

function nonRetryableError(error: unknown, attempts: number, classification: LlmErrorClassification): Error {
  if (error instanceof LlmNonRetryableError) return error;
  return new LlmNonRetryableError(`LLM call failed with a non-retryable error: ${describe(error)}`, {
    cause: error,
    details: { attempts, status: classification.status },
  });
}

function exhaustedError(error: unknown, attempts: number, classification: LlmErrorClassification): Error {
  return new LlmRetryExhaustedError(`LLM call failed after ${attempts} attempt(s): ${describe(error)}`, {
    cause: error,
    details: { attempts, status: classification.status },
  });
}

function timeoutError(run: RetryRun, attempts: number, cause: unknown): LlmTimeoutError {
  const { clock, policy } = run.options;
  const elapsedMs = clock.now() - run.startedAt;
  return new LlmTimeoutError(`LLM call did not finish within the total timeout of ${String(policy.totalTimeoutMs)} ms`, {
    cause,
    details: { attempts, elapsedMs, totalTimeoutMs: policy.totalTimeoutMs },
  });
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'object' && error !== null ? safeJson(error) : String(error);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** A thrown plain object (some clients throw `{ status, message }`) described by its fields. */
function safeJson(value: object): string {
  try {
    return JSON.stringify(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
