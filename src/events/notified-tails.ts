import { duplicateRedis, type RedisConnection } from '../fleet/redis-connection.js';
import type { Logger } from 'pino';
import { tailChannel, type QueueKeys } from '../fleet/fleet-keys.js';
import type { ChannelListener, ChannelListening, ChannelSubscriptions } from './channel-subscriptions.js';
import { closeConnection } from './dedicated-connection.js';
import { blockingTail, type OpenTail, type StreamTail, type TailReads } from './event-subscriber.js';
import type { RawStreamEntry, RawXReadReply } from './stream-entry.js';
import { compareStreamIds, isStreamId, isStreamStart } from './stream-id.js';

/**
 * The tails of a queue's event followers (`subscribe()`, `handle.events()`), on two connections
 * however many follow: each follower subscribes to its session's tail channel (`tailChannel`, on
 * which the publish script publishes the entries each write appends to a followed stream) on the
 * queue's subscribed connection, takes the entries from there when they follow on from its newest,
 * and otherwise reads its stream with a non-blocking `XREAD` on one shared reading connection — not
 * with a connection of its own held in a blocked `XREAD` (`blockingTail`), which a gateway
 * following thousands of sessions would pay for with thousands of Redis connections.
 *
 * Nothing is missed: a follower subscribes first and reads the stream after (whatever was written
 * before the subscription is read then, whatever after is announced); the connection coming back
 * from a drop makes every follower read at once (announcements may have been lost meanwhile); and a
 * follower that heard nothing for `blockMs` reads anyway, as a blocked read would have returned — a
 * worker older than the announcements (a rolling deploy) is followed at that pace. A follower whose
 * subscription is refused (a Redis user without the channel permission) falls back to a blocked
 * connection of its own, and says so in a warning.
 */
export class NotifiedTails {
  readonly #base: RedisConnection;
  readonly #channels: ChannelSubscriptions;
  readonly #queueName: QueueKeys;
  readonly #logger: Logger | null;
  #reading: RedisConnection | null = null;
  #closed = false;

  /** `base` is duplicated, at the first follower, into the reading connection; `channels` carries the subscriptions. */
  constructor(base: RedisConnection, channels: ChannelSubscriptions, queueName: QueueKeys, logger: Logger | null) {
    this.#base = base;
    this.#channels = channels;
    this.#queueName = queueName;
    this.#logger = logger;
  }

  /**
   * Opens a follower's tail, for `followSessionEvents`: resolves once its session's channel is
   * subscribed (a subscription refused: a blocked connection of its own instead, with a warning).
   */
  readonly open: OpenTail = async (sessionId, streamKey, reads) => {
    if (this.#closed) throw new Error('event followers closed');
    const tail = new NotifiedTail(this.#connection(), streamKey, reads);
    const listening = this.#channels.listen(this.#channels.named(tailChannel(this.#queueName, sessionId)), tail);
    tail.hold(listening);
    try {
      await listening.subscribed;
      return tail;
    } catch (error) {
      await tail.close();
      if (this.#closed) throw error;
      this.#logger?.warn({ err: error, sessionId }, 'event follower not subscribed to its tail channel; it reads with a blocked connection of its own');
      return blockingTail(this.#base)(sessionId, streamKey, reads);
    }
  };

  /** Closes the reading connection (the followers have ended: the queue closes after its signal aborted them). */
  async close(): Promise<void> {
    this.#closed = true;
    const reading = this.#reading;
    this.#reading = null;
    if (reading !== null) await closeConnection(reading);
  }

  #connection(): RedisConnection {
    if (this.#reading !== null) return this.#reading;
    // Commands wait for the connection instead of failing at once (the caller's may fail fast), and a
    // read a drop cut off is sent again. Reads issued in the same tick (followers woken by one batch
    // of announcements) go out in one write.
    const reading = duplicateRedis(this.#base, { enableOfflineQueue: true, enableAutoPipelining: true });
    reading.on('error', (error: Error) => this.#logger?.debug({ err: error }, 'redis connection error (event followers)'));
    this.#reading = reading;
    return reading;
  }
}

/**
 * A tail-channel message (`publish-events-script.ts`): the id before the entries, then each entry's
 * id, type and data, lines joined by `\n`. Null when it is not one.
 */
export function parseTailMessage(text: string): { after: string; entries: RawStreamEntry[] } | null {
  const lines = text.split('\n');
  if (lines.length < 4 || (lines.length - 1) % 3 !== 0 || !isStreamId(lines[0]!)) return null;
  const entries: RawStreamEntry[] = [];
  for (let i = 1; i < lines.length; i += 3) {
    const id = lines[i]!;
    if (!isStreamId(id)) return null;
    entries.push([id, ['type', lines[i + 1]!, 'data', lines[i + 2]!]]);
  }
  return { after: lines[0]!, entries };
}

/**
 * One follower's tail. The entries an announcement carries are taken as they are when they follow
 * on from the last entry the follower has (by stream id); otherwise, or when announcements were
 * missed, the stream is read from the cursor. A follower holds at most a page (`count` entries):
 * one whose consumer falls further behind lets them go and reads pages instead, so a slow consumer
 * costs Redis reads, not this process's memory.
 */
class NotifiedTail implements StreamTail, ChannelListener {
  readonly connection: RedisConnection;
  readonly #streamKey: string;
  readonly #reads: TailReads;
  /** Entries taken from announcements, not yet handed to the follower. */
  #held: RawStreamEntry[] = [];
  /** The last entry handed to the follower (its cursor at the next call). */
  #expected: string | null = null;
  /** A read of the stream is out (announced entries are not taken meanwhile: it may or may not have them). */
  #readOut = false;
  /** The newest id announced while a read was out (its entries were not taken). */
  #announced: string | null = null;
  /** Read the stream without an announcement: the first read, after a resync, a full page, entries missed, or `blockMs` without news. */
  #stale = true;
  #wake: (() => void) | null = null;
  #listening: ChannelListening | null = null;
  #closed = false;

  constructor(connection: RedisConnection, streamKey: string, reads: TailReads) {
    this.connection = connection;
    this.#streamKey = streamKey;
    this.#reads = reads;
  }

  hold(listening: ChannelListening): void {
    this.#listening = listening;
  }

  message(text: string): void {
    const announced = parseTailMessage(text);
    if (announced === null) {
      this.#stale = true;
    } else {
      this.#take(announced.after, announced.entries);
    }
    this.#wake?.();
  }

  resync(): void {
    this.#stale = true;
    this.#wake?.();
  }

  async next(cursor: string): Promise<RawXReadReply> {
    const start = isStreamStart(cursor) ? '0-0' : cursor;
    // Its first read, or (never in practice) a cursor other than the last entry handed over: start over from it.
    if (this.#expected !== start) this.#restart(start);
    while (!this.#closed) {
      if (this.#held.length > 0) return this.#handOver(this.#held.splice(0, this.#reads.count));
      const announced = this.#announced !== null && compareStreamIds(this.#announced, this.#expected!) > 0;
      this.#announced = null;
      if (announced || this.#stale) {
        this.#stale = false;
        this.#readOut = true;
        let reply: RawXReadReply;
        try {
          reply = (await this.connection.xread('COUNT', this.#reads.count, 'STREAMS', this.#streamKey, cursor)) as RawXReadReply;
        } finally {
          this.#readOut = false;
        }
        const entries = reply?.[0]?.[1] ?? [];
        // A full page: more may follow.
        if (entries.length >= this.#reads.count) this.#stale = true;
        if (entries.length > 0) return this.#handOver(entries);
        continue;
      }
      await this.#quiet();
    }
    return null;
  }

  interrupt(): void {
    this.#closed = true;
    this.#wake?.();
  }

  close(): Promise<void> {
    this.interrupt();
    this.#listening?.stop();
    return Promise.resolve();
  }

  /** Takes announced entries that follow on from the follower's newest; notes a hole otherwise. */
  #take(after: string, entries: RawStreamEntry[]): void {
    const newest = entries.at(-1)![0];
    if (this.#readOut || this.#expected === null) {
      // A read is out, or none was made yet: the next read goes on from its answer.
      if (this.#announced === null || compareStreamIds(newest, this.#announced) > 0) this.#announced = newest;
      return;
    }
    // What they must follow on from: the newest entry held, else the last handed over.
    const last = this.#held.at(-1)?.[0] ?? this.#expected;
    if (compareStreamIds(newest, last) <= 0) return;
    // Where that is among them (a page may end inside one write's entries).
    const from = after === last ? 0 : entries.findIndex(([id]) => id === last) + 1;
    if (from === 0 && after !== last) {
      this.#stale = true;
      return;
    }
    if (this.#held.length + entries.length - from > this.#reads.count) {
      // More than a page behind: let go, and read pages from the follower's cursor when it asks.
      this.#held = [];
      this.#stale = true;
      return;
    }
    for (let i = from; i < entries.length; i += 1) this.#held.push(entries[i]!);
  }

  /** Hands entries to the follower: the last one is its cursor at the next call. */
  #handOver(entries: RawStreamEntry[]): RawXReadReply {
    this.#expected = entries.at(-1)![0];
    return [[this.#streamKey, entries]];
  }

  /** Follows on from `start`, dropping what was held for another cursor (and reading instead). */
  #restart(start: string): void {
    if (this.#held.length > 0) this.#stale = true;
    this.#held = [];
    this.#expected = start;
  }

  /** Until an announcement, a resync, or `blockMs` without either (then the next read goes ahead anyway). */
  #quiet(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(() => {
        this.#stale = true;
        done();
      }, this.#reads.blockMs);
      this.#wake = done;
    });
  }
}
