/**
 * How the loop retries an LLM call (docs/llm-providers.md). The provider SDKs' own retries
 * are turned off, so this policy is the only one: a call is attempted at most `maxAttempts` times, and
 * no attempt or backoff starts after `totalTimeoutMs`.
 */
import { ConfigInvalidError } from '../errors/index.js';

/** A resolved retry policy: every field present and checked. */
export interface RetryPolicy {
  /** Attempts in all, the first one included; at least 1. Default 3. */
  readonly maxAttempts: number;
  /** Backoff before the first retry, in milliseconds; doubled for each further retry. Default 500. */
  readonly initialDelayMs: number;
  /** Largest backoff before jitter, in milliseconds; at least `initialDelayMs`. Default 8000. */
  readonly maxDelayMs: number;
  /**
   * Deadline for retrying, in milliseconds from the first attempt; `null` for none. No attempt starts
   * and no backoff sleeps past it: a failure at or after it (or whose backoff would reach it) ends the
   * call with `LlmTimeoutError`. An attempt still running at the deadline is not aborted — a long answer
   * may stream for longer; the adapters bound a stalled one (`LLM_REQUEST_TIMEOUT_MS`). Default 60000.
   */
  readonly totalTimeoutMs: number | null;
  /**
   * Random spread of each backoff, as a fraction: 0.2 means ±20 %. It keeps many sessions that failed
   * together from retrying in lockstep against a provider that is already struggling. 0..1, default 0.2.
   */
  readonly jitter: number;
}

/** The defaults, as power-loop ships them (its `LLMRetryPolicy`), plus jitter. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  initialDelayMs: 500,
  maxDelayMs: 8000,
  totalTimeoutMs: 60_000,
  jitter: 0.2,
});

/**
 * Fills in defaults and validates, once, where the policy is configured. Throws `ConfigInvalidError`
 * naming every bad field, so a mistyped policy fails at start-up rather than on the first outage.
 */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...withoutUndefined(partial) };
  const problems = policyProblems(policy);
  if (problems.length > 0) {
    throw new ConfigInvalidError(`invalid retry policy: ${problems.join('; ')}`, { details: { problems } });
  }
  return Object.freeze(policy);
}

function policyProblems(policy: RetryPolicy): string[] {
  const problems: string[] = [];
  if (!Number.isSafeInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    problems.push(`maxAttempts must be an integer ≥ 1 (got ${String(policy.maxAttempts)})`);
  }
  if (!isNonNegativeFinite(policy.initialDelayMs)) {
    problems.push(`initialDelayMs must be a finite number ≥ 0 (got ${String(policy.initialDelayMs)})`);
  }
  if (!isNonNegativeFinite(policy.maxDelayMs) || policy.maxDelayMs < policy.initialDelayMs) {
    problems.push(`maxDelayMs must be a finite number ≥ initialDelayMs (got ${String(policy.maxDelayMs)})`);
  }
  const total = policy.totalTimeoutMs;
  if (total !== null && (!isNonNegativeFinite(total) || total === 0)) {
    problems.push(`totalTimeoutMs must be a finite number > 0 or null (got ${String(total)})`);
  }
  if (typeof policy.jitter !== 'number' || !(policy.jitter >= 0 && policy.jitter <= 1)) {
    problems.push(`jitter must be between 0 and 1 (got ${String(policy.jitter)})`);
  }
  return problems;
}

function isNonNegativeFinite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** `{ a: undefined }` means "not set" (a spread options object), not "set to undefined". */
function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}
