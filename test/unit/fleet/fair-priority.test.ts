import { describe, expect, it } from 'vitest';
import { fairPriority, MAX_JOB_PRIORITY } from '../../../src/fleet/fair-priority.js';
import { TenantSettingsCache, type CachedTenantSettings } from '../../../src/fleet/tenant-settings-cache.js';

describe('fairPriority', () => {
  it('is the rank at weight 100, so every tenant\'s n-th waiting drain shares priority n', () => {
    expect([1, 2, 3, 500].map((rank) => fairPriority(rank, 100))).toEqual([1, 2, 3, 500]);
  });

  it('scales by the weight: a tenant of weight 200 gets two places per place of a tenant of weight 100', () => {
    expect([1, 2, 3, 4].map((rank) => fairPriority(rank, 200))).toEqual([1, 1, 2, 2]);
    expect([1, 2].map((rank) => fairPriority(rank, 50))).toEqual([2, 4]);
    expect(fairPriority(7, 10_000)).toBe(1);
    expect(fairPriority(3, 1)).toBe(300);
  });

  it('stays within BullMQ\'s priorities (1 to 2^21 − 1)', () => {
    expect(fairPriority(0, 100)).toBe(1);
    expect(fairPriority(10_000_000, 1)).toBe(MAX_JOB_PRIORITY);
  });
});

describe('TenantSettingsCache', () => {
  const row = (weight: number): CachedTenantSettings => ({ weight, maxConcurrentInputs: null, maxInputsPerSecond: null });

  it('reads tenants missed in the same tick once, then answers from memory until the TTL passes', async () => {
    let now = 0;
    const reads: string[][] = [];
    const cache = new TenantSettingsCache({
      read: async (tenants) => {
        reads.push([...tenants]);
        return new Map([['heavy', row(300)]]);
      },
      ttlMs: 2_000,
      now: () => now,
    });
    expect(await Promise.all([cache.weight('heavy'), cache.weight('plain'), cache.weight('heavy')])).toEqual([300, 100, 300]);
    expect(reads).toEqual([['heavy', 'plain']]);
    now = 1_999;
    expect(await cache.weight('plain')).toBe(100);
    expect(reads).toHaveLength(1);
    now = 2_000;
    expect(await cache.settings('heavy')).toEqual(row(300));
    expect(reads).toHaveLength(2);
  });

  it('answers the defaults when the read fails, and reports the failure', async () => {
    const errors: unknown[] = [];
    const cache = new TenantSettingsCache({
      read: async () => {
        throw new Error('postgres down');
      },
      onError: (error) => errors.push(error),
    });
    expect(await cache.weight('any')).toBe(100);
    expect(await cache.settings('any')).toBeNull();
    expect(errors).toHaveLength(1);
  });
});
