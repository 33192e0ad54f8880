/**
 * The wait before a retry: exponential backoff with jitter, never shorter than the provider's
 * `retry-after`, never past the total deadline.
 */
import type { RetryPolicy } from './retry-policy.js';

/**
 * Doubling stops mattering long before this; capping the exponent keeps `2 ** n` finite and
 * `0 * 2 ** n` a number rather than NaN.
 */
const MAX_EXPONENT = 52;

/** What {@link backoffDelayMs} needs besides the policy. */
export interface BackoffInput {
  /** Which retry this is, 1-based: 1 is the wait between the first and the second attempt. */
  retry: number;
  /** A uniform random number in [0, 1); injected so tests are deterministic. */
  random: () => number;
  /** The provider's `retry-after`, in milliseconds, when it sent one. */
  retryAfterMs?: number | null;
  /** Time left before the total deadline, in milliseconds; `null` or absent for no deadline. */
  remainingMs?: number | null;
}

/**
 * `min(initialDelayMs × 2^(retry−1), maxDelayMs)`, spread by ±`jitter`, raised to the retry-after when
 * one was given (retrying sooner than the provider asked only earns another 429), then capped at the
 * time left before the deadline. Whole milliseconds, never negative.
 */
export function backoffDelayMs(policy: RetryPolicy, input: BackoffInput): number {
  const exponent = Math.min(Math.max(Math.floor(input.retry) - 1, 0), MAX_EXPONENT);
  const base = Math.min(policy.initialDelayMs * 2 ** exponent, policy.maxDelayMs);
  const spread = policy.jitter * (2 * unitRandom(input.random) - 1);
  let delay = Math.max(0, base * (1 + spread));
  if (input.retryAfterMs != null && input.retryAfterMs > delay) delay = input.retryAfterMs;
  if (input.remainingMs != null) delay = Math.min(delay, Math.max(0, input.remainingMs));
  return Math.round(delay);
}

/** A broken random source must not turn the delay into NaN. */
function unitRandom(random: () => number): number {
  const value = random();
  if (!Number.isFinite(value)) return 0.5;
  return Math.min(Math.max(value, 0), 1);
}
