import { describe, expect, it } from 'vitest';
import { eventDeletedKey, eventFinishedKey, eventSeqKey, eventStreamKey, finishChannel, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { calculateSlot } from '../../../src/fleet/redis-layout.js';

/** Every per-session event key and channel builder. */
const BUILDERS = { eventStreamKey, eventSeqKey, eventFinishedKey, eventDeletedKey, finishChannel, tailChannel };

describe('event keys and channels on one Redis node', () => {
  it('keep the layout of every earlier release (the default)', () => {
    expect(eventStreamKey('lf', 'support-42')).toBe('lf:events:support-42');
    expect(eventSeqKey('lf', 'support-42')).toBe('lf:events:support-42:seq');
    expect(eventFinishedKey('lf', 'support-42')).toBe('lf:events:support-42:finished');
    expect(eventDeletedKey('lf', 'support-42')).toBe('lf:deleted:support-42');
    expect(finishChannel('lf', 'support-42')).toBe('lf:events:support-42:finishes');
    expect(tailChannel('lf', 'support-42')).toBe('lf:events:support-42:tail');
    for (const build of Object.values(BUILDERS)) expect(build('lf', 'support-42', false)).toBe(build('lf', 'support-42'));
  });
});

describe('event keys and channels on a Redis Cluster', () => {
  it('carry the session id as a hash tag', () => {
    expect(eventStreamKey('lf', 'support-42', true)).toBe('lf:events:{support-42}');
    expect(eventSeqKey('lf', 'support-42', true)).toBe('lf:events:{support-42}:seq');
    expect(eventFinishedKey('lf', 'support-42', true)).toBe('lf:events:{support-42}:finished');
    expect(eventDeletedKey('lf', 'support-42', true)).toBe('lf:deleted:{support-42}');
    expect(finishChannel('lf', 'support-42', true)).toBe('lf:events:{support-42}:finishes');
    expect(tailChannel('lf', 'support-42', true)).toBe('lf:events:{support-42}:tail');
  });

  it("all share the slot of the session id, whatever the id and the queue", () => {
    const ids = ['support-42', '123456789', 'a', 'A.b_c:d-e', 'x'.repeat(128), ...Array.from({ length: 200 }, (_, i) => `session-${i}`)];
    for (const queue of ['lf', 'fleet_A-1']) {
      for (const id of ids) {
        const slot = calculateSlot(id);
        for (const [name, build] of Object.entries(BUILDERS)) {
          expect({ name, id, slot: calculateSlot(build(queue, id, true)) }).toEqual({ name, id, slot });
        }
      }
    }
  });

  it('put different sessions on different slots (the keys spread over the cluster)', () => {
    const slots = new Set(Array.from({ length: 200 }, (_, i) => calculateSlot(eventStreamKey('lf', `session-${i}`, true))));
    expect(slots.size).toBeGreaterThan(190);
  });
});
