import { getEventListeners } from 'node:events';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import { lastEventId, readRange, readSessionEvents, type ReadSessionEventsOptions } from '../../../src/events/event-subscriber.js';
import type { FleetEvent, StreamItem } from '../../../src/fleet/fleet-events.js';
import { namedClients, openEventsFixture, openSharedTails, take, waitUntilBlocked, type EventsFixture, type SharedTails } from './events-fixture.js';

const round = (roundIndex: number): FleetEvent => ({ type: 'round_started', roundIndex });

/** The server's clock, in milliseconds. */
async function redisMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** One way of following a stream, and how a test knows a follower is waiting for entries. */
interface Way {
  name: string;
  /** The connection a `'$'` is read on, at the call. */
  reader(): Redis;
  follow(options: ReadSessionEventsOptions): AsyncGenerator<StreamItem, void, undefined>;
  waiting(sessionId: string): Promise<void>;
  /** Resolves once the follower of `sessionId` holds nothing any more (its connection, or its channel subscription). */
  released(sessionId: string): Promise<void>;
}

const summary = (items: StreamItem[]) => items.map((item) => (item.kind === 'gap' ? 'gap' : item.data.seq));

describe('reading a session stream', () => {
  let fx: EventsFixture;
  let admin: Redis;
  /** The base connection subscribers duplicate: its name marks their dedicated connections in CLIENT LIST. */
  let reader: Redis;
  let readerName: string;
  let publisher: RedisEventPublisher;
  let shared: SharedTails;

  beforeAll(() => {
    fx = openEventsFixture('events_subscriber');
    admin = fx.connect();
    readerName = fx.sessionId('reader');
    reader = fx.connect({ connectionName: readerName });
    publisher = new RedisEventPublisher(fx.connect(), { queueName: fx.queue, ownsConnection: true });
    shared = openSharedTails(fx, admin);
  });

  afterAll(async () => {
    await shared?.close();
    await publisher.close();
    await fx.close();
  });

  /** A base connection of its own, so counting its duplicates cannot see other tests' readers. */
  const ownReader = () => {
    const name = fx.sessionId('own');
    return { reader: fx.connect({ connectionName: name }), readerName: name };
  };

  const publishRounds = async (sessionId: string, n: number, from = 0): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = from; i < from + n; i += 1) ids.push(await publisher.publish(sessionId, 1, round(i)));
    return ids;
  };

  /** The two ways a stream is followed: a blocked connection of its own (`readSessionEvents`), or a queue's shared tails. */
  const ways: Way[] = [
    {
      name: 'a blocked connection of its own',
      reader: () => reader,
      follow: (options) => readSessionEvents(reader, options),
      waiting: () => waitUntilBlocked(admin, readerName),
      released: () => vi.waitFor(async () => expect(await namedClients(admin, readerName)).toBe(1), { timeout: 10_000, interval: 10 }),
    },
    {
      name: "a queue's shared tails, woken by announcements",
      reader: () => shared.reader,
      follow: (options) => shared.follow(options),
      waiting: (sessionId) => shared.waiting(sessionId),
      released: (sessionId) => shared.waiting(sessionId, false),
    },
  ];

  describe.each(ways)('through $name', (way) => {
    it('resumes after a cursor with no loss and no duplicate, then follows new events', async () => {
      const sessionId = fx.sessionId('resume');
      const ids = await publishRounds(sessionId, 10);
      const controller = new AbortController();
      const events = way.follow({ queueName: fx.queue, sessionId, after: ids[3], signal: controller.signal });
      const first = await take(events, 6);
      expect(summary(first)).toEqual([5, 6, 7, 8, 9, 10]);
      expect(first.map((item) => (item.kind === 'event' ? item.id : ''))).toEqual(ids.slice(4));
      const pending = take(events, 3);
      await publishRounds(sessionId, 3, 10);
      expect(summary(await pending)).toEqual([11, 12, 13]);
      controller.abort();
      expect(await events.next()).toEqual({ done: true, value: undefined });
    });

    it('ends at once on return() while it waits for news, and lets go of what it held', async () => {
      // A gateway piping a subscription into a response (Readable.from) calls return() when its
      // client goes, while a next() is pending: that return must not wait for the stream's next event.
      const sessionId = fx.sessionId('return');
      // Longer than the test's time-out: a return() that waited for the read would fail the test.
      const events = way.follow({ queueName: fx.queue, sessionId, blockMs: 120_000 });
      const pending = events.next();
      await way.waiting(sessionId);
      const returned = events.return();
      expect(await pending).toEqual({ done: true, value: undefined });
      expect(await returned).toEqual({ done: true, value: undefined });
      await way.released(sessionId);
    });

    it("with '$' (the default) yields only events published after subscribing", async () => {
      const sessionId = fx.sessionId('new');
      await publishRounds(sessionId, 3);
      const events = way.follow({ queueName: fx.queue, sessionId });
      const pending = events.next();
      await way.waiting(sessionId);
      await publishRounds(sessionId, 2, 3);
      const firstNew = await pending;
      expect(firstNew.value).toMatchObject({ kind: 'event', type: 'round_started', data: { seq: 4, roundIndex: 3 } });
      expect(summary(await take(events, 1))).toEqual([5]);
      await events.return();
    });

    it("takes '$' at the call, not at the first next(): an event published in between is not skipped", async () => {
      const sessionId = fx.sessionId('eager');
      await publishRounds(sessionId, 1);
      await way.reader().ping();
      const events = way.follow({ queueName: fx.queue, sessionId });
      // Sent after the call's read on the same connection: once it answers, that read has run.
      await way.reader().ping();
      await publishRounds(sessionId, 1, 1);
      expect((await events.next()).value).toMatchObject({ kind: 'event', data: { seq: 2, roundIndex: 1 } });
      await events.return();
    });

    it('yields a gap when the cursor was trimmed away, then the retained events', async () => {
      const sessionId = fx.sessionId('trimmed');
      const trimming = new RedisEventPublisher(fx.connect(), { queueName: fx.queue, maxLen: 10, ownsConnection: true });
      const first = await trimming.publish(sessionId, 1, round(0));
      const sink = trimming.runSink(sessionId, 1);
      for (let i = 1; i < 400; i += 1) sink.emit(round(i));
      await trimming.close();
      const [oldest] = await readRange(admin, fx.queue, sessionId, { count: 1 });
      const events = way.follow({ queueName: fx.queue, sessionId, after: first });
      const [gap, next] = await take(events, 2);
      await events.return();
      expect(gap).toEqual({ kind: 'gap', after: first, firstAvailable: oldest?.id, resumeFrom: first });
      expect(next).toMatchObject({ kind: 'event', id: oldest?.id });
      expect(oldest?.data.seq).toBeGreaterThan(2);
    });

    it('yields a gap when the stream is gone (Redis lost it), then reads the re-created stream from the start', async () => {
      const sessionId = fx.sessionId('lost');
      const ids = await publishRounds(sessionId, 3);
      await admin.del(`${fx.queue}:events:${sessionId}`, `${fx.queue}:events:${sessionId}:seq`);
      const events = way.follow({ queueName: fx.queue, sessionId, after: ids[2] });
      expect((await events.next()).value).toEqual({ kind: 'gap', after: ids[2], firstAvailable: null, resumeFrom: '0' });
      const pending = take(events, 2);
      await publishRounds(sessionId, 2, 3);
      expect(summary(await pending)).toEqual([1, 2]);
      await events.return();
    });

    it('yields a gap for a cursor from before a re-created stream', async () => {
      const sessionId = fx.sessionId('recreated');
      const ids = await publishRounds(sessionId, 2);
      await admin.del(`${fx.queue}:events:${sessionId}`, `${fx.queue}:events:${sessionId}:seq`);
      // A re-created stream numbers ids from the server clock again; a real loss takes longer than the
      // millisecond this test could otherwise re-create it in, and ids of the same ms are indistinguishable.
      await vi.waitFor(async () => expect(await redisMs(admin)).toBeGreaterThan(Number(ids[1]?.split('-')[0])), { interval: 1 });
      const fresh = await publishRounds(sessionId, 2, 2);
      const events = way.follow({ queueName: fx.queue, sessionId, after: ids[1] });
      const items = await take(events, 3);
      await events.return();
      expect(items[0]).toEqual({ kind: 'gap', after: ids[1], firstAvailable: fresh[0], resumeFrom: ids[1] });
      expect(summary(items.slice(1))).toEqual([1, 2]);
    });

    it('yields a gap where an event was lost in publishing (seq hole)', async () => {
      const sessionId = fx.sessionId('hole');
      const errors: string[] = [];
      const lossy = new RedisEventPublisher(fx.connect(), { queueName: fx.queue, ownsConnection: true, onError: (_e, c) => errors.push(c.stage) });
      const sink = lossy.runSink(sessionId, 1);
      sink.emit(round(0));
      await sink.flush();
      sink.emit({ type: 'tool_call_started', name: 'n', toolCallId: 'c', toolInput: 10n, attempt: 1 } as unknown as FleetEvent);
      sink.emit(round(2));
      await lossy.close();
      expect(errors).toEqual(['encode']);
      const events = way.follow({ queueName: fx.queue, sessionId, after: '0' });
      const items = await take(events, 3);
      await events.return();
      expect(summary(items)).toEqual([1, 'gap', 3]);
      const first = items[0]?.kind === 'event' ? items[0].id : '';
      expect(items[1]).toMatchObject({ kind: 'gap', after: first, resumeFrom: first });
    });

    it('sees a seq hole right after a concrete cursor too', async () => {
      const sessionId = fx.sessionId('hole_cursor');
      const [cursor] = await publishRounds(sessionId, 1);
      await admin.incr(`${fx.queue}:events:${sessionId}:seq`);
      await publishRounds(sessionId, 1, 1);
      const events = way.follow({ queueName: fx.queue, sessionId, after: cursor });
      expect(summary(await take(events, 2))).toEqual(['gap', 3]);
      await events.return();
    });

    it('yields a malformed entry with its raw text instead of throwing', async () => {
      const sessionId = fx.sessionId('malformed');
      await admin.xadd(`${fx.queue}:events:${sessionId}`, '*', 'type', 'alien', 'data', 'not json');
      await publishRounds(sessionId, 1);
      const events = way.follow({ queueName: fx.queue, sessionId, after: '0' });
      const items = await take(events, 2);
      await events.return();
      expect(items[0]).toMatchObject({ kind: 'event', type: 'alien', data: { sessionId, inputSeq: null, seq: 0, raw: 'not json' } });
      expect(items[1]).toMatchObject({ kind: 'event', data: { seq: 1 } });
    });
  });

  it('ends a blocked read promptly on abort and closes its connection', async () => {
    const sessionId = fx.sessionId('abort');
    const { reader, readerName } = ownReader();
    const controller = new AbortController();
    const events = readSessionEvents(reader, { queueName: fx.queue, sessionId, blockMs: 60_000, signal: controller.signal });
    const pending = events.next();
    await waitUntilBlocked(admin, readerName);
    const started = Date.now();
    controller.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(Date.now() - started).toBeLessThan(30_000);
    await vi.waitFor(async () => expect(await namedClients(admin, readerName)).toBe(1), { timeout: 10_000, interval: 10 });
  });

  it('keeps one abort listener on a shared signal for its whole life, not one per read', async () => {
    // A signal shared by many subscriptions keeps its listeners in a list each add and remove walks.
    const controller = new AbortController();
    const listeners = () => getEventListeners(controller.signal, 'abort').length;
    const { reader, readerName } = ownReader();
    const sessions = [fx.sessionId('shared-a'), fx.sessionId('shared-b')];
    const iterators = sessions.map((sessionId) => readSessionEvents(reader, { queueName: fx.queue, sessionId, after: '0', blockMs: 60_000, signal: controller.signal }));
    for (let i = 0; i < 3; i += 1) {
      const next = iterators.map((iterator) => iterator.next());
      await waitUntilBlocked(admin, readerName, 2);
      expect(listeners()).toBe(2);
      for (const sessionId of sessions) await publisher.publish(sessionId, 1, round(i));
      for (const item of await Promise.all(next)) expect(item.value).toMatchObject({ kind: 'event', data: { seq: i + 1 } });
    }
    const pending = iterators.map((iterator) => iterator.next());
    await waitUntilBlocked(admin, readerName, 2);
    controller.abort();
    expect(await Promise.all(pending)).toEqual([{ done: true, value: undefined }, { done: true, value: undefined }]);
    expect(listeners()).toBe(0);
  });

  it('closes its connection when the consumer stops iterating', async () => {
    const sessionId = fx.sessionId('break');
    const { reader, readerName } = ownReader();
    await publishRounds(sessionId, 3);
    for await (const item of readSessionEvents(reader, { queueName: fx.queue, sessionId, after: '0' })) {
      expect(item.kind).toBe('event');
      break;
    }
    await vi.waitFor(async () => expect(await namedClients(admin, readerName)).toBe(1), { timeout: 10_000, interval: 10 });
  });

  it('refuses a malformed cursor with input.invalid', async () => {
    const events = readSessionEvents(reader, { queueName: fx.queue, sessionId: 'x', after: 'yesterday' });
    await expect(events.next()).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(readRange(reader, fx.queue, 'x', { after: '$' })).rejects.toMatchObject({ code: 'input.invalid' });
  });

  it('pages with readRange and reports the last id', async () => {
    const sessionId = fx.sessionId('range');
    expect(await lastEventId(admin, fx.queue, sessionId)).toBeNull();
    expect(await readRange(admin, fx.queue, sessionId)).toEqual([]);
    const ids = await publishRounds(sessionId, 5);
    const page1 = await readRange(admin, fx.queue, sessionId, { count: 2 });
    const page2 = await readRange(admin, fx.queue, sessionId, { after: page1[1]?.id, count: 10 });
    expect([...page1, ...page2].map((event) => event.id)).toEqual(ids);
    expect(page2.map((event) => event.data.seq)).toEqual([3, 4, 5]);
    expect(await readRange(admin, fx.queue, sessionId, { after: ids[4] })).toEqual([]);
    expect(await lastEventId(admin, fx.queue, sessionId)).toBe(ids[4]);
  });
});
