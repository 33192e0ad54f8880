import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, backoffDelayMs, resolveRetryPolicy, type RetryPolicy } from '../../../../src/core/retry/index.js';

describe('resolveRetryPolicy', () => {
  it('defaults to 3 attempts, 500 ms doubling to 8 s, a 60 s deadline and 20 % jitter', () => {
    expect(resolveRetryPolicy()).toEqual({ maxAttempts: 3, initialDelayMs: 500, maxDelayMs: 8000, totalTimeoutMs: 60_000, jitter: 0.2 });
    expect(resolveRetryPolicy()).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('overrides only the fields given; undefined means not given', () => {
    expect(resolveRetryPolicy({ maxAttempts: 5, totalTimeoutMs: null, jitter: undefined })).toEqual({
      ...DEFAULT_RETRY_POLICY,
      maxAttempts: 5,
      totalTimeoutMs: null,
    });
  });

  it('returns a frozen policy', () => {
    expect(Object.isFrozen(resolveRetryPolicy({ maxAttempts: 1 }))).toBe(true);
  });

  const invalid: [string, Partial<RetryPolicy>, RegExp][] = [
    ['zero attempts', { maxAttempts: 0 }, /maxAttempts/],
    ['fractional attempts', { maxAttempts: 1.5 }, /maxAttempts/],
    ['a negative initial delay', { initialDelayMs: -1 }, /initialDelayMs/],
    ['an infinite initial delay', { initialDelayMs: Number.POSITIVE_INFINITY }, /initialDelayMs/],
    ['a max delay below the initial delay', { initialDelayMs: 1000, maxDelayMs: 500 }, /maxDelayMs/],
    ['a zero total timeout', { totalTimeoutMs: 0 }, /totalTimeoutMs/],
    ['a NaN total timeout', { totalTimeoutMs: Number.NaN }, /totalTimeoutMs/],
    ['jitter above 1', { jitter: 1.5 }, /jitter/],
    ['negative jitter', { jitter: -0.1 }, /jitter/],
    ['NaN jitter', { jitter: Number.NaN }, /jitter/],
  ];
  it.each(invalid)('refuses %s with config.invalid', (_name, partial, pattern) => {
    expect(() => resolveRetryPolicy(partial)).toThrow(pattern);
    expect(() => resolveRetryPolicy(partial)).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });

  it('names every bad field at once', () => {
    expect(() => resolveRetryPolicy({ maxAttempts: 0, jitter: 2 })).toThrow(/maxAttempts.*jitter/);
  });
});

describe('backoffDelayMs', () => {
  const policy = resolveRetryPolicy({ jitter: 0 });
  const half = () => 0.5;

  it.each([
    [1, 500],
    [2, 1000],
    [3, 2000],
    [4, 4000],
    [5, 8000],
    [6, 8000],
    [60, 8000],
    [1100, 8000],
    [Number.MAX_SAFE_INTEGER, 8000],
  ])('retry %i waits %i ms (doubling, capped, overflow-safe)', (retry, expected) => {
    expect(backoffDelayMs(policy, { retry, random: half })).toBe(expected);
  });

  it('stays 0 for a zero initial delay however many retries (no 0 × ∞ = NaN)', () => {
    const zero = resolveRetryPolicy({ initialDelayMs: 0, maxDelayMs: 0, jitter: 0 });
    expect(backoffDelayMs(zero, { retry: 5000, random: half })).toBe(0);
  });

  it.each([
    [0, 400],
    [0.5, 500],
    [0.75, 550],
    [1, 600],
  ])('spreads by ±jitter: random %f gives %i ms', (random, expected) => {
    const jittered = resolveRetryPolicy({ jitter: 0.2 });
    expect(backoffDelayMs(jittered, { retry: 1, random: () => random })).toBe(expected);
  });

  it('treats a broken random source as the midpoint', () => {
    const jittered = resolveRetryPolicy({ jitter: 0.2 });
    expect(backoffDelayMs(jittered, { retry: 1, random: () => Number.NaN })).toBe(500);
    expect(backoffDelayMs(jittered, { retry: 1, random: () => 7 })).toBe(600);
  });

  it('waits at least the retry-after', () => {
    expect(backoffDelayMs(policy, { retry: 1, random: half, retryAfterMs: 3000 })).toBe(3000);
    expect(backoffDelayMs(policy, { retry: 1, random: half, retryAfterMs: 100 })).toBe(500);
    // Above the max delay too: the provider knows better than our cap.
    expect(backoffDelayMs(policy, { retry: 1, random: half, retryAfterMs: 20_000 })).toBe(20_000);
  });

  it('never waits past the deadline', () => {
    expect(backoffDelayMs(policy, { retry: 4, random: half, remainingMs: 1500 })).toBe(1500);
    expect(backoffDelayMs(policy, { retry: 1, random: half, retryAfterMs: 30_000, remainingMs: 2000 })).toBe(2000);
    expect(backoffDelayMs(policy, { retry: 1, random: half, remainingMs: -5 })).toBe(0);
    expect(backoffDelayMs(policy, { retry: 1, random: half, remainingMs: null })).toBe(500);
  });
});
