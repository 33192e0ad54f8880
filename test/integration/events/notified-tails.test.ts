import { setMaxListeners } from 'node:events';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChannelSubscriptions } from '../../../src/events/channel-subscriptions.js';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import { readSessionEvents } from '../../../src/events/event-subscriber.js';
import type { FleetEvent, StreamItem } from '../../../src/fleet/fleet-events.js';
import { NotifiedTails, parseTailMessage } from '../../../src/events/notified-tails.js';
import { eventStreamKey, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { finishedEvent, namedClients, openEventsFixture, openSharedTails, take, waitUntilBlocked, type EventsFixture, type SharedTails } from './events-fixture.js';

const round = (roundIndex: number): FleetEvent => ({ type: 'round_started', roundIndex });

/** Long enough that no follower here reads because it heard nothing for a while. */
const NEVER_QUIET_MS = 600_000;

const seqs = (items: StreamItem[]) => items.map((item) => (item.kind === 'gap' ? 'gap' : item.data.seq));

/**
 * A queue's event followers on shared connections (`NotifiedTails`): the publish script announces
 * the newest id of each write on the session's tail channel, a follower reads its stream when an
 * announcement is past its cursor, and whatever announcements cannot carry (a dropped connection, a
 * worker that does not announce, a Redis user without the channel) is still read. The stream
 * semantics themselves (cursors, gaps, malformed entries) run against these tails in
 * subscriber.test.ts.
 */
describe('event followers on shared tails', () => {
  let fx: EventsFixture;
  let admin: Redis;
  let publisher: RedisEventPublisher;
  let shared: SharedTails;

  beforeAll(() => {
    fx = openEventsFixture('events_notified_tails');
    admin = fx.connect();
    publisher = new RedisEventPublisher(fx.connect(), { queueName: fx.queue, ownsConnection: true });
    shared = openSharedTails(fx, admin);
  });

  afterAll(async () => {
    await shared?.close();
    await publisher?.close();
    await fx.close();
  });

  /** An entry appended without an announcement, as a worker of an older version writes it (its seq taken from the counter). */
  const unannounced = async (sessionId: string): Promise<string> => {
    const seq = await admin.incr(`${eventStreamKey(fx.queue, sessionId)}:seq`);
    return (await admin.xadd(eventStreamKey(fx.queue, sessionId), '*', 'type', 'round_started', 'data', JSON.stringify({ seq, sessionId, inputSeq: 1, roundIndex: seq })))!;
  };

  it('publishes the entries each write appends to a followed stream on its tail channel, after the id before them', async () => {
    const sessionId = fx.sessionId('announced');
    const listener = fx.connect();
    const heard: string[] = [];
    listener.on('message', (_channel: string, message: string) => heard.push(message));
    await listener.subscribe(tailChannel(fx.queue, sessionId));
    const sink = publisher.runSink(sessionId, 1);
    for (let i = 0; i < 3; i += 1) sink.emit(round(i));
    await sink.flush();
    await publisher.publish(sessionId, 1, finishedEvent('done'));
    // The same input's finish again: left out, nothing appended, nothing published.
    expect(await publisher.publish(sessionId, 1, finishedEvent('copy'))).toBe('');
    // A PING answered after the script calls: every message they caused has arrived before it.
    await listener.ping();
    const entries = (await admin.xrange(eventStreamKey(fx.queue, sessionId), '-', '+')) as [string, string[]][];
    expect(entries).toHaveLength(4);
    const lines = ([id, fields]: [string, string[]]) => [id, fields[1], fields[3]];
    expect(heard.map((message) => message.split('\n'))).toEqual([
      ['0-0', ...entries.slice(0, 3).flatMap(lines)],
      [entries[2]![0], ...lines(entries[3]!)],
    ]);
    expect(heard.map(parseTailMessage)).toEqual([
      { after: '0-0', entries: entries.slice(0, 3) },
      { after: entries[2]![0], entries: [entries[3]] },
    ]);
  });

  it('still writes the events of a publisher whose Redis user may not run PUBSUB, unannounced', async () => {
    const user = `lf_no_pubsub_${process.pid}`;
    await admin.acl('SETUSER', user, 'on', 'nopass', '~*', '&*', '+@all', '-pubsub');
    const refused = new RedisEventPublisher(fx.connect({ username: user }), { queueName: fx.queue, ownsConnection: true });
    try {
      const sessionId = fx.sessionId('no-pubsub');
      const listener = fx.connect();
      const heard: string[] = [];
      listener.on('message', (_channel: string, message: string) => heard.push(message));
      await listener.subscribe(tailChannel(fx.queue, sessionId));
      const id = await refused.publish(sessionId, 1, round(0));
      await listener.ping();
      expect(((await admin.xrange(eventStreamKey(fx.queue, sessionId), '-', '+')) as [string, string[]][]).map(([entry]) => entry)).toEqual([id]);
      expect(heard).toEqual([]);
    } finally {
      await refused.close();
      await admin.acl('DELUSER', user);
    }
  });

  /** A round's data as the script writes it, for crafted announcements. */
  const body = (sessionId: string, seq: number) => JSON.stringify({ seq, sessionId, inputSeq: 1, roundIndex: seq });
  /** Ids on no stream: an entry with one reaches a follower only when taken from an announcement. */
  const nowhere = (n: number) => `9999999999999-${n}`;

  /** A follower past its first entry, which it had from the stream or its announcement: it reads nothing more unless told. */
  const settledFollower = async (sessionId: string, count?: number) => {
    const events = shared.follow(Object.assign({ queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS }, count === undefined ? {} : { count }));
    const first = events.next();
    await shared.waiting(sessionId);
    const cursor = await publisher.publish(sessionId, 1, round(0));
    expect((await first).value).toMatchObject({ kind: 'event', id: cursor });
    return { events, cursor };
  };

  it('hands over announced entries that follow on from its newest without reading the stream', async () => {
    const sessionId = fx.sessionId('taken');
    const { events, cursor } = await settledFollower(sessionId);
    const first = events.next();
    await admin.publish(tailChannel(fx.queue, sessionId), [cursor, nowhere(1), 'round_started', body(sessionId, 2), nowhere(2), 'round_started', body(sessionId, 3)].join('\n'));
    expect((await first).value).toMatchObject({ kind: 'event', id: nowhere(1), data: { seq: 2 } });
    expect((await events.next()).value).toMatchObject({ kind: 'event', id: nowhere(2), data: { seq: 3 } });
    await events.return();
  });

  it('reads the stream instead when announced entries do not follow on from its newest', async () => {
    const sessionId = fx.sessionId('hole');
    const { events } = await settledFollower(sessionId);
    const first = events.next();
    const missed = await unannounced(sessionId);
    await admin.publish(tailChannel(fx.queue, sessionId), [missed, nowhere(3), 'round_started', body(sessionId, 3)].join('\n'));
    expect((await first).value).toMatchObject({ kind: 'event', id: missed, data: { seq: 2 } });
    await events.return();
  });

  it('holds at most a page of announced entries: for a consumer further behind it lets them go, and reads the stream when asked', async () => {
    const sessionId = fx.sessionId('behind');
    const { events, cursor } = await settledFollower(sessionId, 3);
    // The consumer does not ask while a page, then one entry more, is announced (ids on no stream).
    const announce = (after: string, from: number, n: number) =>
      admin.publish(tailChannel(fx.queue, sessionId), [after, ...Array.from({ length: n }, (_, i) => [nowhere(from + i), 'round_started', body(sessionId, from + i + 1)]).flat()].join('\n'));
    // A listener on the same subscribed connection: once it has both messages, so has the follower.
    let heard = 0;
    const witness = shared.channels.listen(tailChannel(fx.queue, sessionId), { message: () => void (heard += 1), resync: () => {} });
    await witness.subscribed;
    await announce(cursor, 1, 3);
    await announce(nowhere(3), 4, 1);
    await vi.waitFor(() => expect(heard).toBe(2), { timeout: 10_000, interval: 5 });
    witness.stop();
    const written = await unannounced(sessionId);
    expect((await events.next()).value).toMatchObject({ kind: 'event', id: written });
    await events.return();
  });

  it('follows many sessions on two connections, each follower woken by its own session’s announcements', async () => {
    const sessions = Array.from({ length: 20 }, (_, i) => fx.sessionId(`many-${i}`));
    const before = await namedClients(admin, shared.name);
    const controller = new AbortController();
    // One signal for every follower, a listener each: by design (docs/client.md).
    setMaxListeners(0, controller.signal);
    const followers = sessions.map((sessionId) => shared.follow({ queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS, signal: controller.signal }));
    const firsts = followers.map((follower) => follower.next());
    for (const sessionId of sessions) await shared.waiting(sessionId);
    // The base connection, the subscribed one and the reading one, however many follow.
    expect(await namedClients(admin, shared.name)).toBe(Math.max(before, 3));
    expect(shared.channels.channels).toBe(20);
    for (const [i, sessionId] of sessions.entries()) await publisher.publish(sessionId, 1, round(i));
    const items = await Promise.all(firsts);
    expect(items.map((item) => item.value)).toEqual(sessions.map((sessionId, i) => expect.objectContaining({ kind: 'event', data: expect.objectContaining({ sessionId, seq: 1, roundIndex: i }) })));
    controller.abort();
    for (const follower of followers) expect(await follower.next()).toEqual({ done: true, value: undefined });
    for (const sessionId of sessions) await shared.waiting(sessionId, false);
    expect(shared.channels.channels).toBe(0);
  });

  it('reads an unannounced entry with the next announcement, and a full page’s rest without one', async () => {
    const sessionId = fx.sessionId('paged');
    const events = shared.follow({ queueName: fx.queue, sessionId, after: '0', count: 2, blockMs: NEVER_QUIET_MS });
    const pending = take(events, 6);
    await shared.waiting(sessionId);
    await unannounced(sessionId);
    // One script call, one announcement, five entries: pages of two.
    const sink = publisher.runSink(sessionId, 1);
    for (let i = 0; i < 5; i += 1) sink.emit(round(i));
    await sink.flush();
    expect(seqs(await pending)).toEqual([1, 2, 3, 4, 5, 6]);
    await events.return();
  });

  it('reads at once when its connection comes back from a drop: announcements sent meanwhile are lost', async () => {
    const sessionId = fx.sessionId('dropped');
    const controller = new AbortController();
    const events = shared.follow({ queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS, signal: controller.signal });
    const first = events.next();
    await shared.waiting(sessionId);
    await publisher.publish(sessionId, 1, round(0));
    expect((await first).value).toMatchObject({ kind: 'event', data: { seq: 1 } });
    // Past its first read, the follower reads only when told: written with no announcement, the next
    // entry is read because of the drop alone.
    const second = events.next();
    await unannounced(sessionId);
    const list = (await admin.client('LIST')) as string;
    const subscribed = list.split('\n').find((line) => line.includes(` name=${shared.name} `) && / flags=\S*P/.test(line));
    await admin.client('KILL', 'ID', /\bid=(\d+)/.exec(subscribed!)![1]!);
    expect((await second).value).toMatchObject({ kind: 'event', data: { seq: 2 } });
    // Subscribed again: announcements reach it again.
    const third = events.next();
    await publisher.publish(sessionId, 1, round(2));
    expect((await third).value).toMatchObject({ kind: 'event', data: { seq: 3 } });
    controller.abort();
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('carries on when every connection it uses is dropped at once (a Redis restart, as the client sees it)', async () => {
    const sessionId = fx.sessionId('restart');
    const { events } = await settledFollower(sessionId);
    const pending = events.next();
    const list = (await admin.client('LIST')) as string;
    const ids = list.split('\n').filter((line) => line.includes(` name=${shared.name} `)).map((line) => /\bid=(\d+)/.exec(line)![1]!);
    // The base, the subscribed and the reading connection.
    expect(ids).toHaveLength(3);
    for (const id of ids) await admin.client('KILL', 'ID', id);
    // Written while it may still be reconnecting: the resync reads what the lost announcement carried.
    const second = await publisher.publish(sessionId, 1, round(1));
    expect((await pending).value).toMatchObject({ kind: 'event', id: second, data: { seq: 2 } });
    const third = events.next();
    await publisher.publish(sessionId, 1, round(2));
    expect((await third).value).toMatchObject({ kind: 'event', data: { seq: 3 } });
    await events.return();
  });

  it('reads anyway after blockMs without an announcement (a worker that does not announce)', async () => {
    const sessionId = fx.sessionId('quiet');
    const events = shared.follow({ queueName: fx.queue, sessionId, after: '0', blockMs: 50 });
    const first = events.next();
    await shared.waiting(sessionId);
    await unannounced(sessionId);
    expect((await first).value).toMatchObject({ kind: 'event', data: { seq: 1 } });
    await events.return();
  });

  it('ignores an announcement that is not a stream id', async () => {
    const sessionId = fx.sessionId('garbled');
    const events = shared.follow({ queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS });
    const first = events.next();
    await shared.waiting(sessionId);
    await admin.publish(tailChannel(fx.queue, sessionId), 'not an id');
    await publisher.publish(sessionId, 1, round(0));
    expect((await first).value).toMatchObject({ kind: 'event', data: { seq: 1 } });
    await events.return();
  });

  it('keeps the shared subscription for the other followers of a session when one stops', async () => {
    const sessionId = fx.sessionId('two');
    const [a, b] = [new AbortController(), new AbortController()];
    const first = shared.follow({ queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS, signal: a.signal });
    const second = shared.follow({ queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS, signal: b.signal });
    const [pendingFirst, pendingSecond] = [first.next(), second.next()];
    await shared.waiting(sessionId);
    a.abort();
    expect(await pendingFirst).toEqual({ done: true, value: undefined });
    await publisher.publish(sessionId, 1, round(0));
    expect((await pendingSecond).value).toMatchObject({ kind: 'event', data: { seq: 1 } });
    await shared.waiting(sessionId);
    b.abort();
    expect(await second.next()).toEqual({ done: true, value: undefined });
    await shared.waiting(sessionId, false);
  });

  it('falls back to a blocked connection of its own, with a warning, for a Redis user refused the channel (ACL)', async () => {
    const user = `lf_notified_tails_${process.pid}`;
    // Every key and command, no channel.
    await admin.acl('SETUSER', user, 'on', 'nopass', '~*', '+@all', 'resetchannels');
    const name = fx.sessionId('refused');
    const restricted = fx.connect({ username: user, connectionName: name });
    const warnings: { msg: string; sessionId: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string; sessionId: string }) });
    const channels = new ChannelSubscriptions(restricted, logger);
    const tails = new NotifiedTails(restricted, channels, fx.queue, logger);
    try {
      const sessionId = fx.sessionId('acl');
      const events = readSessionEvents(restricted, { queueName: fx.queue, sessionId, after: '0', blockMs: NEVER_QUIET_MS }, tails.open);
      const first = events.next();
      await waitUntilBlocked(admin, name);
      expect(warnings).toEqual([expect.objectContaining({ sessionId, msg: expect.stringContaining('blocked connection of its own') })]);
      await publisher.publish(sessionId, 1, round(0));
      expect((await first).value).toMatchObject({ kind: 'event', data: { seq: 1 } });
      await events.return();
    } finally {
      await channels.close();
      await tails.close();
      await admin.acl('DELUSER', user);
    }
  });

  it('refuses new followers once closed', async () => {
    const own = openSharedTails(fx, admin);
    await own.close();
    const events = own.follow({ queueName: fx.queue, sessionId: fx.sessionId('closed'), after: '0' });
    await expect(events.next()).rejects.toMatchObject({ code: 'system.infrastructure' });
  });
});
