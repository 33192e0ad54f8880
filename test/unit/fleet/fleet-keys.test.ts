import { describe, expect, it } from 'vitest';
import { eventDeletedKey, eventFinishedKey, eventSeqKey, eventStreamKey, finishChannel, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { calculateSlot, shardOf, shardPrefix, singleNodeLayout, type RedisLayout } from '../../../src/fleet/redis-layout.js';

/** Every per-session event key and channel builder. */
const BUILDERS = { eventStreamKey, eventSeqKey, eventFinishedKey, eventDeletedKey, finishChannel, tailChannel };

const cluster = (queueName: string, shards: number): RedisLayout => ({ queueName, cluster: true, shards });

describe('event keys and channels on one Redis node', () => {
  it('keep the layout of every earlier release, named by the queue or by its single-node layout', () => {
    expect(eventStreamKey('lf', 'support-42')).toBe('lf:events:support-42');
    expect(eventSeqKey('lf', 'support-42')).toBe('lf:events:support-42:seq');
    expect(eventFinishedKey('lf', 'support-42')).toBe('lf:events:support-42:finished');
    expect(eventDeletedKey('lf', 'support-42')).toBe('lf:deleted:support-42');
    expect(finishChannel('lf', 'support-42')).toBe('lf:events:support-42:finishes');
    expect(tailChannel('lf', 'support-42')).toBe('lf:events:support-42:tail');
    for (const build of Object.values(BUILDERS)) expect(build(singleNodeLayout('lf'), 'support-42')).toBe(build('lf', 'support-42'));
  });
});

describe('event keys and channels on a Redis Cluster', () => {
  it("carry the hash tag of the session's queue shard", () => {
    const layout = cluster('lf', 6);
    // The key slot of "support-42" is 5753: 5753 mod 6 = 5.
    expect(shardOf(layout, 'support-42')).toBe(5);
    expect(eventStreamKey(layout, 'support-42')).toBe('{lf:5}:events:support-42');
    expect(eventSeqKey(layout, 'support-42')).toBe('{lf:5}:events:support-42:seq');
    expect(eventFinishedKey(layout, 'support-42')).toBe('{lf:5}:events:support-42:finished');
    expect(eventDeletedKey(layout, 'support-42')).toBe('{lf:5}:deleted:support-42');
    expect(finishChannel(layout, 'support-42')).toBe('{lf:5}:events:support-42:finishes');
    expect(tailChannel(layout, 'support-42')).toBe('{lf:5}:events:support-42:tail');
  });

  it("all share the slot of the session's shard queue (its BullMQ keys), whatever the id and the queue", () => {
    const ids = ['support-42', '123456789', 'a', 'A.b_c:d-e', 'x'.repeat(128), ...Array.from({ length: 200 }, (_, i) => `session-${i}`)];
    for (const layout of [cluster('lf', 1), cluster('fleet_A-1', 3), cluster('lf', 16)]) {
      for (const id of ids) {
        const slot = calculateSlot(`${shardPrefix(layout, shardOf(layout, id))}:${layout.queueName}:wait`);
        for (const [name, build] of Object.entries(BUILDERS)) {
          expect({ name, id, slot: calculateSlot(build(layout, id)) }).toEqual({ name, id, slot });
        }
      }
    }
  });

  it('put the sessions of a queue in as many slots as it has shards', () => {
    const layout = cluster('lf', 8);
    const slots = new Set(Array.from({ length: 400 }, (_, i) => calculateSlot(eventStreamKey(layout, `session-${i}`))));
    expect(slots.size).toBe(8);
  });
});
