import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { expect, inject, vi } from 'vitest';
import { ChannelSubscriptions } from '../../../src/events/channel-subscriptions.js';
import { readSessionEvents, type ReadSessionEventsOptions } from '../../../src/events/event-subscriber.js';
import type { FleetEvent, StreamItem } from '../../../src/fleet/fleet-events.js';
import { NotifiedTails } from '../../../src/events/notified-tails.js';
import { tailChannel } from '../../../src/fleet/fleet-keys.js';
import { uniqueName } from '../../support/test-database.js';

/** A completed input's `input_finished`, as a worker emits it (`steeredInto` for an input steered into another). */
export const finishedEvent = (finalText: string, steeredInto?: number): FleetEvent => ({
  type: 'input_finished',
  status: 'completed',
  finalText,
  rounds: 1,
  toolCalls: 0,
  usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 1, costUsd: 0, costPicoUsd: 0 },
  error: null,
  ...(steeredInto === undefined ? {} : { steeredInto }),
});

/** Redis connections and names for one test file; `close()` quits every connection it opened. */
export interface EventsFixture {
  url: string;
  /** This file's queue name: every stream key starts with it. */
  queue: string;
  /** A new connection, tracked for `close()`. */
  connect(options?: RedisOptions): Redis;
  /** A session id unique within the file. */
  sessionId(label: string): string;
  /** Deletes this file's keys and quits every tracked connection. */
  close(): Promise<void>;
}

export function openEventsFixture(label: string): EventsFixture {
  const url = inject('redisUrl');
  const queue = uniqueName(label);
  const connections: Redis[] = [];
  const connect = (options: RedisOptions = {}): Redis => {
    const redis = new Redis(url, options);
    connections.push(redis);
    return redis;
  };
  return {
    url,
    queue,
    connect,
    sessionId: (name) => `${name}-${randomBytes(3).toString('hex')}`,
    close: async () => {
      const admin = connect();
      const keys = await admin.keys(`${queue}:*`);
      if (keys.length > 0) await admin.del(...keys);
      await Promise.all(connections.map((redis) => (redis.status === 'end' ? undefined : redis.quit().catch(() => redis.disconnect()))));
    },
  };
}

/** Clients named `name` that are blocked in XREAD right now, from CLIENT LIST. */
export async function blockedReaders(admin: Redis, name: string): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  return list.split('\n').filter((line) => line.includes(` name=${name} `) && line.includes(' cmd=xread') && / flags=\S*b/.test(line)).length;
}

/** Clients named `name` that are connected at all. */
export async function namedClients(admin: Redis, name: string): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
}

/** Polls (with vitest's deadline) until a reader named `name` is parked in XREAD BLOCK. */
export async function waitUntilBlocked(admin: Redis, name: string, readers = 1): Promise<void> {
  await vi.waitFor(async () => expect(await blockedReaders(admin, name)).toBe(readers), { timeout: 10_000, interval: 10 });
}

/** A queue's shared tails (`NotifiedTails`) on a named base connection of their own, for tests. */
export interface SharedTails {
  /** The base connection (named `name`): a `'$'` is read on it, and the tails' connections duplicate it (same name). */
  reader: Redis;
  name: string;
  channels: ChannelSubscriptions;
  tails: NotifiedTails;
  /** `readSessionEvents` through the shared tails. */
  follow(options: ReadSessionEventsOptions): AsyncGenerator<StreamItem, void, undefined>;
  /** Polls until the session's tail channel is subscribed (`following` false: until it is not). */
  waiting(sessionId: string, following?: boolean): Promise<void>;
  close(): Promise<void>;
}

export function openSharedTails(fx: EventsFixture, admin: Redis): SharedTails {
  const name = fx.sessionId('shared');
  const reader = fx.connect({ connectionName: name });
  const channels = new ChannelSubscriptions(reader, null);
  const tails = new NotifiedTails(reader, channels, fx.queue, null);
  return {
    reader,
    name,
    channels,
    tails,
    follow: (followOptions) => readSessionEvents(reader, followOptions, tails.open),
    waiting: async (sessionId, following = true) => {
      const channel = tailChannel(fx.queue, sessionId);
      await vi.waitFor(async () => expect(((await admin.pubsub('NUMSUB', channel)) as [string, number])[1]).toBe(following ? 1 : 0), { timeout: 10_000, interval: 10 });
    },
    close: async () => {
      await channels.close();
      await tails.close();
    },
  };
}

/** Takes the next `n` items from a running iterator. */
export async function take(iterator: AsyncGenerator<StreamItem>, n: number): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  while (items.length < n) {
    const next = await iterator.next();
    if (next.done === true) break;
    items.push(next.value);
  }
  return items;
}
