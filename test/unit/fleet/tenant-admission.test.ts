import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { TenantRateLimitedError } from '../../../src/core/errors/index.js';
import { TenantAdmission, TENANT_RATES_TTL_MS } from '../../../src/fleet/tenant-admission.js';
import { rateBurst } from '../../../src/fleet/tenant-rate-bucket.js';
import { rateLimitedDelayMs } from '../../../src/worker/job-router.js';

/** A Redis stand-in answering the bucket script with `reply` (a wait in ms), counting calls. */
function fakeRedis(reply: () => Promise<unknown>): { redis: Redis; calls: string[] } {
  const calls: string[] = [];
  const answer = async (_script: string, _keys: number, key: string) => {
    calls.push(key);
    return reply();
  };
  return { redis: { evalsha: answer, eval: answer } as unknown as Redis, calls };
}

function admission(rates: Record<string, number>, redis: Redis, sessionTenants: Record<string, string> = {}) {
  let now = 0;
  const reads = { rates: 0, sessions: 0 };
  const gate = new TenantAdmission({
    redis,
    queueName: 'q',
    readRates: async () => {
      reads.rates += 1;
      return new Map(Object.entries(rates));
    },
    readSessionTenant: async (sessionId) => {
      reads.sessions += 1;
      return sessionTenants[sessionId] ?? null;
    },
    now: () => now,
  });
  return { gate, reads, advance: (ms: number) => (now += ms) };
}

describe('tenant admission', () => {
  it('with no rated tenant, checks nothing: no session read, no Redis call', async () => {
    const { redis, calls } = fakeRedis(async () => 0);
    const { gate, reads } = admission({}, redis);
    for (let n = 0; n < 10; n += 1) await gate.admit('s1', undefined);
    await gate.admit('s2', 'acme');
    expect(calls).toEqual([]);
    expect(reads).toEqual({ rates: 1, sessions: 0 });
  });

  it('reads the rates once per TTL, shared by concurrent adds', async () => {
    const { redis } = fakeRedis(async () => 0);
    const { gate, reads, advance } = admission({ acme: 5 }, redis);
    await Promise.all([gate.admit('a', 'other'), gate.admit('b', 'other'), gate.admit('c', 'other')]);
    expect(reads.rates).toBe(1);
    advance(TENANT_RATES_TTL_MS - 1);
    await gate.admit('a', 'other');
    expect(reads.rates).toBe(1);
    advance(1);
    await gate.admit('a', 'other');
    expect(reads.rates).toBe(2);
  });

  it('checks only rated tenants; an add without a tenant counts against its session, read once, or default', async () => {
    const { redis, calls } = fakeRedis(async () => 0);
    const { gate, reads } = admission({ acme: 5, default: 1 }, redis, { s1: 'acme', s2: 'globex' });
    await gate.admit('s1', undefined);
    await gate.admit('s1', undefined);
    await gate.admit('s2', undefined);
    await gate.admit('new', undefined);
    await gate.admit('x', 'globex');
    expect(calls).toEqual(['q:rate:acme', 'q:rate:acme', 'q:rate:default']);
    // s1 and s2 remembered; a session that did not exist is read again next time.
    expect(reads.sessions).toBe(3);
    await gate.admit('s1', undefined);
    await gate.admit('new', undefined);
    expect(reads.sessions).toBe(4);
  });

  it('an empty bucket throws tenant.rate_limited with retryAfterMs; a failing Redis admits', async () => {
    const { redis } = fakeRedis(async () => 250);
    const { gate } = admission({ acme: 4 }, redis);
    const refused = await gate.admit('s', 'acme').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TenantRateLimitedError);
    expect((refused as TenantRateLimitedError).details).toEqual({ tenant: 'acme', maxInputsPerSecond: 4, retryAfterMs: 250 });
    const broken = fakeRedis(async () => {
      throw new Error('connection closed');
    });
    await expect(admission({ acme: 4 }, broken.redis).gate.admit('s', 'acme')).resolves.toBeUndefined();
  });

  it('bursts one second of the rate, at least one input', () => {
    expect(rateBurst(20)).toBe(20);
    expect(rateBurst(0.5)).toBe(1);
  });

  it('delays a rate-limited raw job by the wait plus a spread of up to as much again, at least a second', () => {
    const error = (retryAfterMs: number) => new TenantRateLimitedError('over', { details: { retryAfterMs } });
    expect(rateLimitedDelayMs(error(300), () => 0)).toBe(300);
    expect(rateLimitedDelayMs(error(300), () => 0.999)).toBeLessThanOrEqual(1_300);
    expect(rateLimitedDelayMs(error(4_000), () => 0.5)).toBe(6_000);
  });
});
