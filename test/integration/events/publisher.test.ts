import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { publisherConnection, RedisEventPublisher } from '../../../src/events/event-publisher.js';
import type { EventPublishErrorContext } from '../../../src/events/event-publisher-options.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';
import { expiryRefreshMs } from '../../../src/events/publish-events-script.js';
import { openEventsFixture, type EventsFixture } from './events-fixture.js';

type Entry = [string, string[]];
const round = (roundIndex: number): FleetEvent => ({ type: 'round_started', roundIndex });

/**
 * A TCP proxy to Redis that, once armed, passes the next script call (`EVAL`/`EVALSHA`) to Redis,
 * then drops the connection instead of its reply: Redis ran it, the client never hears so.
 */
function replyDroppingProxy(target: URL) {
  let armed = false;
  let refusing = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    let dropReply = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => {
      if (armed && /\$(4|7)\r\neval(sha)?\r\n/i.test(chunk.toString('latin1'))) {
        armed = false;
        dropReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => (dropReply ? end() : client.write(chunk)));
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
  });
  return {
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))),
    arm: () => void (armed = true),
    /** While set, every new connection is closed at once (a Redis that is down). */
    refuse: (on: boolean) => void (refusing = on),
    /** Drops every connection through the proxy (the clients reconnect). */
    dropAll: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

describe('RedisEventPublisher against Redis', () => {
  let fx: EventsFixture;
  let redis: Redis;

  beforeAll(() => {
    fx = openEventsFixture('events_publisher');
    redis = fx.connect();
  });

  afterAll(async () => {
    await fx.close();
  });

  const entries = async (sessionId: string): Promise<Entry[]> => (await redis.xrange(`${fx.queue}:events:${sessionId}`, '-', '+')) as Entry[];

  it('writes exactly two fields, type and data, with seq, sessionId and inputSeq in data', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('wire');
    const sink = publisher.runSink(sessionId, 3);
    sink.emit({ type: 'steer_applied', inputSeqs: [], roundIndex: 0 });
    sink.emit({ type: 'tool_call_started', name: 'lookup', toolCallId: 'call_1', toolInput: { tags: [], nested: { a: [1] } }, attempt: 1 });
    await sink.close();
    const id = await publisher.publish(sessionId, null, { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'in-1' });
    await publisher.close();

    const stream = await entries(sessionId);
    expect(stream.map(([, fields]) => [fields[0], fields[2]])).toEqual([
      ['type', 'data'],
      ['type', 'data'],
      ['type', 'data'],
    ]);
    expect(stream.every(([, fields]) => fields.length === 4)).toBe(true);
    expect(stream.map(([, fields]) => fields[3])).toEqual([
      `{"seq":1,"sessionId":"${sessionId}","inputSeq":3,"inputSeqs":[],"roundIndex":0}`,
      `{"seq":2,"sessionId":"${sessionId}","inputSeq":3,"name":"lookup","toolCallId":"call_1","toolInput":{"tags":[],"nested":{"a":[1]}},"attempt":1}`,
      `{"seq":3,"sessionId":"${sessionId}","inputSeq":null,"kind":"send","mode":"queue","inputId":"in-1"}`,
    ]);
    expect(stream.map(([, fields]) => fields[1])).toEqual(['steer_applied', 'tool_call_started', 'input_accepted']);
    expect(stream[2]?.[0]).toBe(id);
    expect(publisher.published).toBe(3);
  });

  it('writes text of any script byte for byte, every entry in its place', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, coalesceMs: 0 });
    const sessionId = fx.sessionId('utf8');
    const sink = publisher.runSink(sessionId, 1);
    const texts = ['héllo', '👋 日本語', '', ',', 'a,b,,c', '\u0000', 'x'.repeat(5_000), 'Ωmega'];
    for (const text of texts) sink.emit({ type: 'stream_delta', streamId: 'main', text });
    await sink.close();
    await publisher.close();
    const stream = await entries(sessionId);
    expect(stream.map(([, fields]) => fields[1])).toEqual(texts.map(() => 'stream_delta'));
    expect(stream.map(([, fields]) => (JSON.parse(fields[3]!) as { text: string }).text)).toEqual(texts);
    expect(stream.map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number }).seq)).toEqual(texts.map((_, i) => i + 1));
  });

  it('numbers seq 1..N without gaps, in stream order, across two publishers on separate connections', async () => {
    const sessionId = fx.sessionId('race');
    const a = new RedisEventPublisher(fx.connect(), { queueName: fx.queue, ownsConnection: true });
    const b = new RedisEventPublisher(fx.connect(), { queueName: fx.queue, ownsConnection: true });
    const sinkA = a.runSink(sessionId, 3);
    const sinkB = b.runSink(sessionId, 4);
    const publishedA: Promise<string>[] = [];
    const publishedB: Promise<string>[] = [];
    for (let i = 0; i < 200; i += 1) {
      publishedA.push(a.publish(sessionId, 1, round(i)));
      publishedB.push(b.publish(sessionId, 2, round(i)));
      sinkA.emit(round(i));
      sinkB.emit(round(i));
      if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const [idsA, idsB] = await Promise.all([Promise.all(publishedA), Promise.all(publishedB)]);
    await Promise.all([a.close(), b.close()]);

    const stream = await entries(sessionId);
    const data = stream.map(([, fields]) => JSON.parse(fields[3] ?? '') as { seq: number; inputSeq: number; roundIndex: number });
    expect(data.map((d) => d.seq)).toEqual(Array.from({ length: 800 }, (_, i) => i + 1));
    for (const inputSeq of [1, 2, 3, 4]) {
      expect(data.filter((d) => d.inputSeq === inputSeq).map((d) => d.roundIndex)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    }
    // The two publishers' writes really did interleave on the stream.
    const owner = data.map((d) => (d.inputSeq % 2 === 1 ? 'a' : 'b'));
    expect(owner.filter((who, i) => i > 0 && who !== owner[i - 1]).length).toBeGreaterThan(2);
    expect(new Set([...idsA, ...idsB]).size).toBe(400);
    const idsOf = (inputSeq: number) => stream.filter((_, i) => data[i]?.inputSeq === inputSeq).map(([id]) => id);
    expect(idsOf(1)).toEqual(idsA);
    expect(idsOf(2)).toEqual(idsB);
    expect(await redis.get(`${fx.queue}:events:${sessionId}:seq`)).toBe('800');
  });

  it('sets the idle expiry on both the stream and the seq key', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, idleExpirySeconds: 300 });
    const sessionId = fx.sessionId('ttl');
    await publisher.publish(sessionId, 1, round(0));
    const ttls = [await redis.ttl(`${fx.queue}:events:${sessionId}`), await redis.ttl(`${fx.queue}:events:${sessionId}:seq`)];
    for (const ttl of ttls) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(300);
    }
    await publisher.close();
  });

  it('pushes the idle expiry back at most once per refresh interval, and always on keys it creates', async () => {
    let clock = 1_000_000;
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, idleExpirySeconds: 300, now: () => clock });
    const sessionId = fx.sessionId('ttl-refresh');
    const keys = [`${fx.queue}:events:${sessionId}`, `${fx.queue}:events:${sessionId}:seq`, `${fx.queue}:events:${sessionId}:finished`];
    const ttls = async () => Promise.all(keys.map((key) => redis.ttl(key)));
    const sink = publisher.runSink(sessionId, 1);
    sink.emit(round(0));
    await sink.flush();
    expect((await ttls()).slice(0, 2).every((ttl) => ttl > 250 && ttl <= 300)).toBe(true);

    // Within the interval a write leaves the expiry where the last push put it.
    for (const key of keys.slice(0, 2)) await redis.expire(key, 5);
    sink.emit(round(1));
    await sink.flush();
    expect((await ttls()).slice(0, 2).every((ttl) => ttl > 0 && ttl <= 5)).toBe(true);

    // A finish creates the finished set: it gets the expiry at once, whatever the interval.
    sink.emit({ type: 'input_finished', status: 'completed', finalText: 'x', rounds: 1, toolCalls: 0, usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 1, costUsd: 0, costPicoUsd: 0 }, error: null });
    await sink.flush();
    const [, , finishedTtl] = await ttls();
    expect(finishedTtl).toBeGreaterThan(250);

    // Keys deleted under the publisher (a session deleted, then used again) are created with an expiry.
    await redis.del(...keys);
    sink.emit(round(2));
    await sink.flush();
    expect((await ttls()).slice(0, 2).every((ttl) => ttl > 250 && ttl <= 300)).toBe(true);

    // Once the interval has passed, the next write pushes every key's expiry back.
    for (const key of keys.slice(0, 2)) await redis.expire(key, 5);
    clock += expiryRefreshMs(300);
    sink.emit(round(3));
    await sink.flush();
    expect((await ttls()).slice(0, 2).every((ttl) => ttl > 250 && ttl <= 300)).toBe(true);
    expect((await entries(sessionId)).length).toBe(2);
    await publisher.close();
  });

  it("keeps writing after Redis's script cache is flushed, each entry once", async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('script-flush');
    await publisher.publish(sessionId, 1, round(0));
    await redis.script('FLUSH');
    await publisher.publish(sessionId, 1, round(1));
    expect((await entries(sessionId)).map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number }).seq)).toEqual([1, 2]);
    expect(publisher.dropped).toBe(0);
    await publisher.close();
  });

  it("writes under the connection's keyPrefix, as ioredis's own commands do", async () => {
    const prefixed = fx.connect({ keyPrefix: `${fx.queue}:pfx:` });
    const publisher = new RedisEventPublisher(prefixed, { queueName: fx.queue });
    const sessionId = fx.sessionId('prefixed');
    const id = await publisher.publish(sessionId, 1, round(0));
    expect(await prefixed.xlen(`${fx.queue}:events:${sessionId}`)).toBe(1);
    expect((await redis.xrange(`${fx.queue}:pfx:${fx.queue}:events:${sessionId}`, '-', '+')).map(([entryId]) => entryId)).toEqual([id]);
    expect(await redis.get(`${fx.queue}:pfx:${fx.queue}:events:${sessionId}:seq`)).toBe('1');
    await publisher.close();
  });

  it('keeps the stream near maxLen with approximate trimming while seq keeps counting', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, maxLen: 100 });
    const sessionId = fx.sessionId('trim');
    const sink = publisher.runSink(sessionId, 1);
    for (let i = 0; i < 1000; i += 1) {
      sink.emit(round(i));
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await sink.close();
    const length = await redis.xlen(`${fx.queue}:events:${sessionId}`);
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThanOrEqual(200);
    const [last] = (await redis.xrevrange(`${fx.queue}:events:${sessionId}`, '+', '-', 'COUNT', 1)) as Entry[];
    expect(JSON.parse(last?.[1][3] ?? '')).toMatchObject({ seq: 1000, roundIndex: 999 });
    await publisher.close();
  });

  it('writes the sessions ready in one turn in one script call; a session whose key Redis refuses loses only its own events', async () => {
    const errors: EventPublishErrorContext[] = [];
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, maxLen: 50, onError: (_error, context) => errors.push(context) });
    const ids = [fx.sessionId('shared-a'), fx.sessionId('shared-b'), fx.sessionId('shared-c')];
    // A stream key that holds a string: XADD on it fails inside the script.
    await redis.set(`${fx.queue}:events:${ids[1]}`, 'not a stream');
    const sent = vi.spyOn(redis, 'sendCommand');
    const sinks = ids.map((id) => publisher.runSink(id, 1));
    for (const [i, sink] of sinks.entries()) for (let r = 0; r <= i; r += 1) sink.emit(round(r));
    await publisher.flush();
    // EVALSHA once (ioredis resends it as EVAL only when the server lacks the script).
    const scriptCalls = sent.mock.calls.filter(([command]) => command.name === 'evalsha');
    sent.mockRestore();
    expect(scriptCalls).toHaveLength(1);
    const seqOf = async (id: string) => (await entries(id)).map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number }).seq);
    expect(await seqOf(ids[0]!)).toEqual([1]);
    expect(await seqOf(ids[2]!)).toEqual([1, 2, 3]);
    expect(errors).toEqual([{ sessionId: ids[1], stage: 'write', events: 2, types: ['round_started', 'round_started'] }]);
    expect(publisher.published).toBe(4);
    // Its seq numbers were taken before the XADD failed; once the key is a stream again the hole shows.
    await redis.del(`${fx.queue}:events:${ids[1]}`);
    sinks[1]!.emit(round(9));
    await publisher.flush();
    expect(await seqOf(ids[1]!)).toEqual([5]);
    expect(await redis.ttl(`${fx.queue}:events:${ids[2]}`)).toBeGreaterThan(0);
    await publisher.close();
  });

  /**
   * A publisher on its own connection (`publisherConnection`), duplicated as a worker's is, through a
   * {@link replyDroppingProxy}. `enableOfflineQueue: false` on the client it duplicates: as BullMQ
   * advises for a producer's, which a `SessionQueue` may be given.
   */
  async function proxiedPublisher(baseOptions: { enableOfflineQueue?: boolean } = {}) {
    const proxy = replyDroppingProxy(new URL(fx.url));
    const port = await proxy.listen();
    const base = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null, lazyConnect: true, ...baseOptions });
    const connection = publisherConnection(base);
    connection.on('error', () => {});
    const errors: string[] = [];
    const publisher = new RedisEventPublisher(connection, { queueName: fx.queue, ownsConnection: true, onError: (error) => void errors.push(error.message) });
    return { proxy, base, connection, publisher, errors };
  }

  it('never re-sends a script call whose reply a dropped connection lost: no event is written twice (publisherConnection)', async () => {
    const { proxy, base, publisher, errors } = await proxiedPublisher();
    try {
      const sessionId = fx.sessionId('reply-lost');
      await publisher.publish(sessionId, 1, round(0));
      proxy.arm();
      const sink = publisher.runSink(sessionId, 1);
      sink.emit(round(1));
      sink.emit({ type: 'stream_delta', streamId: 'main', text: 'Hello' });
      sink.emit(round(2));
      await sink.flush();
      await publisher.publish(sessionId, 1, round(3));
      const written = await entries(sessionId);
      // Each event once (Redis ran the lost call once); whatever hole the loss leaves is a gap, not a copy.
      expect(written.map(([, fields]) => fields[1])).toEqual(['round_started', 'round_started', 'stream_delta', 'round_started', 'round_started']);
      const seqs = written.map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number }).seq);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await publisher.close();
      base.disconnect();
      await proxy.close();
    }
  });

  it.each([
    ['', {}],
    [', though the client it duplicates fails fast (enableOfflineQueue: false)', { enableOfflineQueue: false }],
  ])('a publish made while its connection reconnects waits in the offline queue and is written once, not counted lost (publisherConnection)%s', async (_, baseOptions) => {
    const { proxy, base, connection, publisher, errors } = await proxiedPublisher(baseOptions);
    try {
      const sessionId = fx.sessionId('offline');
      await publisher.publish(sessionId, 1, round(0));
      proxy.refuse(true);
      proxy.dropAll();
      await vi.waitFor(() => expect(connection.status).not.toBe('ready'), { timeout: 5_000, interval: 1 });
      // Queued while Redis is down, through failed reconnects (each closes the connection again).
      const queued = publisher.publish(sessionId, 1, round(1));
      let closes = 0;
      connection.on('close', () => void (closes += 1));
      await vi.waitFor(() => expect(closes).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
      proxy.refuse(false);
      await queued;
      const written = await entries(sessionId);
      expect(written.map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number; roundIndex: number }).roundIndex)).toEqual([0, 1]);
      expect(written.map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number }).seq)).toEqual([1, 2]);
      expect(publisher.dropped).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await publisher.close();
      base.disconnect();
      await proxy.close();
    }
  });

  it('reports Redis errors through onError, never throws from emit, and counts the loss', async () => {
    const connection = fx.connect();
    const errors: EventPublishErrorContext[] = [];
    const publisher = new RedisEventPublisher(connection, { queueName: fx.queue, onError: (_error, context) => errors.push(context) });
    const sessionId = fx.sessionId('broken');
    const sink = publisher.runSink(sessionId, 1);
    sink.emit(round(0));
    await sink.flush();
    await connection.quit();
    expect(() => {
      sink.emit(round(1));
      sink.emit({ type: 'stream_delta', streamId: 's', text: 'lost' });
    }).not.toThrow();
    await sink.flush();
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0));
    expect(errors[0]).toMatchObject({ sessionId, stage: 'write' });
    expect(publisher.dropped).toBe(2);
    expect(publisher.published).toBe(1);
    await expect(publisher.publish(sessionId, 1, round(2))).rejects.toMatchObject({ code: 'system.infrastructure' });
    await publisher.close();
  });
});
