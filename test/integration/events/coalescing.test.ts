import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';
import { openEventsFixture, type EventsFixture } from './events-fixture.js';

type Entry = [string, string[]];
interface Row {
  type: string;
  data: { seq: number; text?: string; streamId?: string };
}

const delta = (text: string): FleetEvent => ({ type: 'stream_delta', streamId: 'st_1', text });
const tokens = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `tok${from + i} `);

describe('delta coalescing on the stream', () => {
  let fx: EventsFixture;
  let redis: Redis;

  beforeAll(() => {
    fx = openEventsFixture('events_coalesce');
    redis = fx.connect();
  });

  afterAll(async () => {
    await fx.close();
  });

  const rows = async (sessionId: string): Promise<Row[]> =>
    ((await redis.xrange(`${fx.queue}:events:${sessionId}`, '-', '+')) as Entry[]).map(([, fields]) => ({
      type: fields[1] ?? '',
      data: JSON.parse(fields[3] ?? '') as Row['data'],
    }));
  const text = (list: Row[]) => list.map((row) => row.data.text ?? '').join('');

  it('turns 100 synchronous deltas into far fewer entries whose text is the input', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('burst');
    const sink = publisher.runSink(sessionId, 1);
    const input = tokens(100);
    for (const token of input) sink.emit(delta(token));
    await sink.close();
    const stream = await rows(sessionId);
    expect(stream.length).toBeLessThanOrEqual(5);
    expect(text(stream)).toBe(input.join(''));
    expect(stream.map((row) => row.data.seq)).toEqual(stream.map((_, i) => i + 1));
    expect(publisher.coalesced).toBe(100 - stream.length);
    await publisher.close();
  });

  it('splits at a tool call, keeping the order the loop emitted', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('split');
    const sink = publisher.runSink(sessionId, 1);
    const before = tokens(50);
    const after = tokens(50, 50);
    for (const token of before) sink.emit(delta(token));
    sink.emit({ type: 'tool_call_started', name: 'search', toolCallId: 'c1', toolInput: { q: 'x' }, attempt: 1 });
    for (const token of after) sink.emit(delta(token));
    await sink.close();
    const stream = await rows(sessionId);
    const split = stream.findIndex((row) => row.type === 'tool_call_started');
    expect(split).toBeGreaterThan(0);
    expect(stream.filter((row) => row.type === 'tool_call_started')).toHaveLength(1);
    expect(text(stream.slice(0, split))).toBe(before.join(''));
    expect(text(stream.slice(split + 1))).toBe(after.join(''));
    expect(stream.length).toBeLessThanOrEqual(5);
    await publisher.close();
  });

  it('never merges past coalesceMaxChars', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, coalesceMaxChars: 100, coalesceMs: 10_000 });
    const sessionId = fx.sessionId('cap');
    const sink = publisher.runSink(sessionId, 1);
    const input = tokens(100);
    for (const token of input) sink.emit(delta(token));
    await sink.close();
    const stream = await rows(sessionId);
    expect(text(stream)).toBe(input.join(''));
    expect(stream.every((row) => (row.data.text ?? '').length <= 100)).toBe(true);
    expect(stream.length).toBeGreaterThanOrEqual(Math.ceil(input.join('').length / 100));
    await publisher.close();
  });

  it('keeps thinking deltas apart from text deltas', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, coalesceMs: 600_000 });
    const sessionId = fx.sessionId('think');
    const sink = publisher.runSink(sessionId, 1);
    sink.emit({ type: 'stream_think_delta', streamId: 'st_1', text: 'hmm ' });
    sink.emit({ type: 'stream_think_delta', streamId: 'st_1', text: 'ok' });
    sink.emit(delta('Hello'));
    sink.emit(delta('!'));
    await sink.close();
    expect((await rows(sessionId)).map((row) => [row.type, row.data.text])).toEqual([
      ['stream_think_delta', 'hmm ok'],
      ['stream_delta', 'Hello!'],
    ]);
    await publisher.close();
  });

  it('flushes pending deltas on publisher close, however long the window', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, coalesceMs: 600_000 });
    const sessionId = fx.sessionId('close');
    const sink = publisher.runSink(sessionId, 1);
    sink.emit(delta('pending '));
    sink.emit(delta('text'));
    await publisher.close();
    expect((await rows(sessionId)).map((row) => row.data.text)).toEqual(['pending text']);
  });
});
