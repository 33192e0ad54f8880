import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import { openEventsFixture, type EventsFixture } from './events-fixture.js';
import { rawFollow } from './raw-xread-client.js';

describe('touch point 2: a plain Redis client follows a session stream', () => {
  let fx: EventsFixture;
  let redis: Redis;

  beforeAll(() => {
    fx = openEventsFixture('events_raw');
    redis = fx.connect();
  });

  afterAll(async () => {
    await fx.close();
  });

  it('reads every event with XREAD BLOCK and parses data without loopfleet code', async () => {
    // A window longer than the test: the two deltas merge however slow the machine is (flush releases them).
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, coalesceMs: 600_000 });
    const sessionId = fx.sessionId('raw');
    await publisher.publish(sessionId, 7, { type: 'input_started', attempt: 1, agent: { name: 'default', version: 'v1' } });
    // The raw client starts from '0' and blocks while the run is still producing.
    const following = rawFollow(fx.url, fx.queue, sessionId, '0', 4);
    const sink = publisher.runSink(sessionId, 7);
    sink.emit({ type: 'stream_delta', streamId: 'st', text: 'Hel' });
    sink.emit({ type: 'stream_delta', streamId: 'st', text: 'lo' });
    sink.emit({ type: 'tool_call_started', name: 'clock', toolCallId: 'c1', toolInput: {}, attempt: 1 });
    await sink.flush();
    await publisher.publish(sessionId, 7, {
      type: 'input_finished',
      status: 'completed',
      error: null,
      finalText: 'Hello',
      rounds: 1,
      toolCalls: 1,
      usage: { promptTokens: 1, completionTokens: 2, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 3, llmCalls: 1, costUsd: 0, costPicoUsd: 0 },
    });
    const events = await following;
    await publisher.close();

    expect(events.map((event) => event.type)).toEqual(['input_started', 'stream_delta', 'tool_call_started', 'input_finished']);
    expect(events.map((event) => event.data.seq)).toEqual([1, 2, 3, 4]);
    for (const event of events) expect(event.data).toMatchObject({ sessionId, inputSeq: 7 });
    expect(events[1]?.data).toMatchObject({ streamId: 'st', text: 'Hello' });
    expect(events[2]?.data).toMatchObject({ name: 'clock', toolCallId: 'c1', toolInput: {} });
    expect(events[3]?.data).toMatchObject({ status: 'completed', finalText: 'Hello', error: null, usage: { totalTokens: 3 } });
  });
});
