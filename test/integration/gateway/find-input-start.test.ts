import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { findInputStart } from '../../../src/gateway/sse/find-input-start.js';
import { openEventsFixture, type EventsFixture } from '../events/events-fixture.js';

let fx: EventsFixture;
let redis: Redis;

beforeAll(() => {
  fx = openEventsFixture('find_input_start');
  redis = fx.connect();
});
afterAll(async () => fx.close());

/** Appends entries shaped like the publisher's; answers their ids. */
async function append(sessionId: string, entries: [type: string, inputSeq: number | null][]): Promise<string[]> {
  const key = eventStreamKey(fx.queue, sessionId);
  const ids: string[] = [];
  for (const [type, inputSeq] of entries) {
    const id = await redis.xadd(key, '*', 'type', type, 'data', JSON.stringify({ sessionId, inputSeq, seq: ids.length + 1 }));
    ids.push(id!);
  }
  return ids;
}

describe('findInputStart', () => {
  it('answers the entry before the input_accepted, also when the input was accepted while another ran', async () => {
    const sessionId = fx.sessionId('interleaved');
    const ids = await append(sessionId, [
      ['input_accepted', 1],
      ['input_started', 1],
      ['input_accepted', 2],
      ['stream_delta', 1],
      ['input_finished', 1],
      ['timer_fired', null],
      ['input_started', 2],
      ['stream_delta', 2],
    ]);
    expect(await findInputStart(redis, fx.queue, sessionId, 1)).toBe('0');
    expect(await findInputStart(redis, fx.queue, sessionId, 2)).toBe(ids[1]);
    expect(await findInputStart(redis, fx.queue, sessionId, 3)).toBe('0');
    expect(await findInputStart(redis, fx.queue, fx.sessionId('none'), 1)).toBe('0');
  });

  it('pages back past a long answer', async () => {
    const sessionId = fx.sessionId('long');
    const deltas: [string, number][] = Array.from({ length: 450 }, () => ['stream_delta', 2]);
    const ids = await append(sessionId, [['input_finished', 1], ['input_accepted', 2], ...deltas]);
    expect(await findInputStart(redis, fx.queue, sessionId, 2)).toBe(ids[0]);
  });

  it('falls back to the earliest retained entry of a trimmed input', async () => {
    const sessionId = fx.sessionId('trimmed');
    const ids = await append(sessionId, [
      ['input_finished', 1],
      ['input_accepted', 2],
      ['input_started', 2],
      ['stream_delta', 2],
      ['stream_delta', 2],
    ]);
    await redis.xtrim(eventStreamKey(fx.queue, sessionId), 'MAXLEN', 2);
    expect(await findInputStart(redis, fx.queue, sessionId, 2)).toBe('0');
    // Accepted while input 2 ran, then trimmed away: the start is input 3's earliest retained entry.
    const more = await append(sessionId, [['input_accepted', 3], ['input_finished', 2], ['input_started', 3], ['stream_delta', 3]]);
    await redis.xtrim(eventStreamKey(fx.queue, sessionId), 'MAXLEN', 3);
    expect(await findInputStart(redis, fx.queue, sessionId, 3)).toBe(more[1]);
    expect(ids).toHaveLength(5);
  });
});
