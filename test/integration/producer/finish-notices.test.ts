import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChannelSubscriptions } from '../../../src/events/channel-subscriptions.js';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import type { StreamEvent } from '../../../src/fleet/fleet-events.js';
import { finishChannel } from '../../../src/fleet/fleet-keys.js';
import { FinishNotices, type FinishListener } from '../../../src/producer/finish-notices.js';
import { finishedEvent, openEventsFixture, type EventsFixture } from '../events/events-fixture.js';

const finished = finishedEvent;

/** A listener that records what it is told. */
function recorder(): FinishListener & { events: StreamEvent[]; resyncs: number } {
  const heard = {
    events: [] as StreamEvent[],
    resyncs: 0,
    finished: (event: StreamEvent) => heard.events.push(event),
    resync: () => {
      heard.resyncs += 1;
    },
  };
  return heard;
}

/**
 * `result()`'s subscription: one connection for every wait of a queue, one SUBSCRIBE per session with
 * waits, gone when the last wait on the session ends; the announcements the publish script makes
 * reach exactly the session's listeners; after a dropped connection every listener is told to read
 * Postgres again, once the channels are subscribed again.
 */
describe('FinishNotices', () => {
  let fx: EventsFixture;
  let admin: Redis;
  let base: Redis;
  let publisher: RedisEventPublisher;
  let channels: ChannelSubscriptions;
  let notices: FinishNotices;
  const name = `finish-notices-${process.pid}`;

  beforeAll(() => {
    fx = openEventsFixture('finish_notices');
    admin = fx.connect();
    // Named, so this file's connections can be told apart from other files' in CLIENT LIST.
    base = fx.connect({ connectionName: name });
    publisher = new RedisEventPublisher(fx.connect(), { queueName: fx.queue });
    channels = new ChannelSubscriptions(base, null);
    notices = new FinishNotices(channels, fx.queue);
  });

  afterAll(async () => {
    await channels?.close();
    await publisher?.close();
    await fx.close();
  });

  const subscribers = async (sessionId: string): Promise<number> => {
    const [, count] = (await admin.pubsub('NUMSUB', finishChannel(fx.queue, sessionId))) as [string, number];
    return count;
  };
  /** Subscriber connections of this file (pub/sub flag `P`). */
  const subscriberConnections = async (): Promise<string[]> => {
    const list = (await admin.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `) && / flags=\S*P/.test(line));
  };

  it('shares one subscription among the listeners of a session, passes them its finishes only, and unsubscribes when the last one stops', async () => {
    const sessionId = fx.sessionId('shared');
    const [first, second, elsewhere] = [recorder(), recorder(), recorder()];
    const a = notices.listen(sessionId, first);
    const b = notices.listen(sessionId, second);
    const c = notices.listen(`${sessionId}-x`, elsewhere);
    await Promise.all([a.subscribed, b.subscribed, c.subscribed]);
    expect(await subscribers(sessionId)).toBe(1);
    expect(channels.channels).toBe(2);
    // Every listener, of either session, on the one connection.
    expect(await subscriberConnections()).toHaveLength(1);

    const id = await publisher.publish(sessionId, 4, finished('four'));
    await vi.waitFor(() => expect(second.events).toHaveLength(1), { timeout: 10_000, interval: 5 });
    expect(first.events).toEqual(second.events);
    expect(first.events[0]).toMatchObject({ kind: 'event', id, type: 'input_finished', data: { sessionId, inputSeq: 4, finalText: 'four' } });

    a.stop();
    a.stop();
    expect(await subscribers(sessionId)).toBe(1);
    b.stop();
    await vi.waitFor(async () => expect(await subscribers(sessionId)).toBe(0), { timeout: 10_000, interval: 5 });
    c.stop();
    expect(channels.channels).toBe(0);
    expect(elsewhere.events).toEqual([]);
  });

  it('subscribes again for a listener that starts right after the last one stopped', async () => {
    const sessionId = fx.sessionId('again');
    notices.listen(sessionId, recorder()).stop();
    const later = recorder();
    const listening = notices.listen(sessionId, later);
    await listening.subscribed;
    const id = await publisher.publish(sessionId, 1, finished('heard'));
    await vi.waitFor(() => expect(later.events.map((event) => event.id)).toEqual([id]), { timeout: 10_000, interval: 5 });
    listening.stop();
  });

  it('passes an announcement it cannot parse as a malformed event (seq 0), and ignores one without an id', async () => {
    const sessionId = fx.sessionId('malformed');
    const heard = recorder();
    const listening = notices.listen(sessionId, heard);
    await listening.subscribed;
    await admin.publish(finishChannel(fx.queue, sessionId), 'no-space-here');
    await admin.publish(finishChannel(fx.queue, sessionId), '1-1 not json');
    await vi.waitFor(() => expect(heard.events).toHaveLength(1), { timeout: 10_000, interval: 5 });
    expect(heard.events[0]).toMatchObject({ id: '1-1', data: { seq: 0, inputSeq: null, raw: 'not json' } });
    listening.stop();
  });

  it('after its connection is dropped, subscribes again and tells every listener to read Postgres; announcements reach them again', async () => {
    const sessionId = fx.sessionId('dropped');
    const heard = recorder();
    const listening = notices.listen(sessionId, heard);
    await listening.subscribed;
    const [line] = await subscriberConnections();
    const id = /\bid=(\d+)/.exec(line!)![1]!;
    await admin.client('KILL', 'ID', id);
    await vi.waitFor(() => expect(heard.resyncs).toBe(1), { timeout: 10_000, interval: 5 });
    expect(await subscribers(sessionId)).toBe(1);
    const after = await publisher.publish(sessionId, 2, finished('after the drop'));
    await vi.waitFor(() => expect(heard.events.map((event) => event.id)).toEqual([after]), { timeout: 10_000, interval: 5 });
    listening.stop();
  });

  it('rejects the subscription of a Redis user refused the channels (ACL), and tries again for the next listener', async () => {
    const user = `lf_finish_notices_${process.pid}`;
    // Every key and command, no channel: the client can still add inputs, not follow announcements.
    await admin.acl('SETUSER', user, 'on', 'nopass', '~*', '+@all', 'resetchannels');
    const restricted = fx.connect({ username: user });
    const refusedChannels = new ChannelSubscriptions(restricted, null);
    const refused = new FinishNotices(refusedChannels, fx.queue);
    try {
      const sessionId = fx.sessionId('acl');
      const first = refused.listen(sessionId, recorder());
      await expect(first.subscribed).rejects.toThrow(/NOPERM/);
      expect(refusedChannels.channels).toBe(0);
      first.stop();
      const again = refused.listen(sessionId, recorder());
      await expect(again.subscribed).rejects.toThrow(/NOPERM/);
      again.stop();
    } finally {
      await refusedChannels.close();
      await admin.acl('DELUSER', user);
    }
  });

  it('refuses new listeners once closed', async () => {
    const closedChannels = new ChannelSubscriptions(base, null);
    const closed = new FinishNotices(closedChannels, fx.queue);
    await closedChannels.close();
    await expect(closed.listen('any', recorder()).subscribed).rejects.toThrow('channel subscriptions closed');
  });
});
