import { describe, expect, it } from 'vitest';
import {
  calculateSlot,
  keyRootOfQueue,
  MAX_QUEUE_SHARDS,
  shardKeyRoot,
  shardOf,
  shardPrefix,
  singleNodeLayout,
  type RedisLayout,
} from '../../../src/fleet/redis-layout.js';

const cluster = (shards: number, queueName = 'lf'): RedisLayout => ({ queueName, cluster: true, shards });

describe('calculateSlot', () => {
  it("is Redis Cluster's key slot (CRC16-XMODEM mod 16384), as CLUSTER KEYSLOT answers", () => {
    // The check value of CRC16/XMODEM, and the vector Redis's own cluster spec gives.
    expect(calculateSlot('123456789')).toBe(12739);
    // Answers of `CLUSTER KEYSLOT` on Redis 7.0.
    expect(calculateSlot('foo')).toBe(12182);
    expect(calculateSlot('bar')).toBe(5061);
    expect(calculateSlot('')).toBe(0);
  });

  it('hashes only the hash tag of a key that has one', () => {
    expect(calculateSlot('lf:events:{support-42}')).toBe(calculateSlot('support-42'));
    expect(calculateSlot('{user1000}.following')).toBe(calculateSlot('user1000'));
    // An empty tag is no tag: the whole key is hashed.
    expect(calculateSlot('{}abc')).not.toBe(calculateSlot(''));
  });
});

describe('shardOf', () => {
  it('is always 0 with one shard, on one node and in a cluster', () => {
    for (const id of ['a', 'support-42', '123456789', 'x'.repeat(128)]) {
      expect(shardOf(singleNodeLayout('lf'), id)).toBe(0);
      expect(shardOf(cluster(1), id)).toBe(0);
    }
  });

  it("is the session id's key slot modulo the shard count", () => {
    expect(shardOf(cluster(3), '123456789')).toBe(12739 % 3);
    expect(shardOf(cluster(16), '123456789')).toBe(12739 % 16);
    expect(shardOf(cluster(MAX_QUEUE_SHARDS), 'foo')).toBe(12182 % MAX_QUEUE_SHARDS);
    expect(shardOf(cluster(7), 'bar')).toBe(5061 % 7);
  });

  it('is stable and in range for many ids and shard counts, and uses every shard', () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => `session-${i}`);
    for (const shards of [2, 3, 5, 16, MAX_QUEUE_SHARDS]) {
      const layout = cluster(shards);
      const used = new Set<number>();
      for (const id of ids) {
        const shard = shardOf(layout, id);
        expect(Number.isInteger(shard) && shard >= 0 && shard < shards).toBe(true);
        expect(shardOf(cluster(shards, 'other-queue'), id)).toBe(shard);
        used.add(shard);
      }
      expect(used.size).toBe(Math.min(shards, ids.length));
    }
  });

  it('does not depend on the queue name', () => {
    expect(shardOf(cluster(5, 'a'), 'support-42')).toBe(shardOf(cluster(5, 'b'), 'support-42'));
  });
});

describe('shard prefixes and key roots', () => {
  it("on one node: BullMQ's default prefix and the queue name", () => {
    const layout = singleNodeLayout('lf');
    expect(layout).toEqual({ queueName: 'lf', cluster: false, shards: 1 });
    expect(shardPrefix(layout, 0)).toBe('bull');
    expect(shardKeyRoot(layout, 0)).toBe('lf');
  });

  it("in a cluster: the shard's hash tag", () => {
    const layout = cluster(3);
    expect([0, 1, 2].map((shard) => shardPrefix(layout, shard))).toEqual(['bull:{lf:0}', 'bull:{lf:1}', 'bull:{lf:2}']);
    expect([0, 1, 2].map((shard) => shardKeyRoot(layout, shard))).toEqual(['{lf:0}', '{lf:1}', '{lf:2}']);
    // A shard's BullMQ keys and its own keys share one slot.
    for (const shard of [0, 1, 2]) {
      expect(calculateSlot(`${shardPrefix(layout, shard)}:lf:wait`)).toBe(calculateSlot(`${shardKeyRoot(layout, shard)}:fair:tenants`));
    }
  });

  it('keyRootOfQueue finds the key root again from a queue\'s qualified name (`<prefix>:<queue>`)', () => {
    for (const layout of [singleNodeLayout('lf'), cluster(1), cluster(4), cluster(MAX_QUEUE_SHARDS, 'fleet_A-1')]) {
      for (let shard = 0; shard < layout.shards; shard += 1) {
        const qualifiedName = `${shardPrefix(layout, shard)}:${layout.queueName}`;
        expect(keyRootOfQueue(qualifiedName, layout.queueName)).toBe(shardKeyRoot(layout, shard));
      }
    }
  });

  it('keyRootOfQueue answers the queue name for a prefix without a hash tag', () => {
    expect(keyRootOfQueue('bull:lf', 'lf')).toBe('lf');
    expect(keyRootOfQueue('custom:lf', 'lf')).toBe('lf');
  });
});
