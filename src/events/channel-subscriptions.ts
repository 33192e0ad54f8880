import type { Redis } from 'ioredis';
import { duplicateRedis, isCluster, redisKeyPrefix, type RedisConnection } from '../fleet/redis-connection.js';
import { calculateSlot } from '../fleet/redis-layout.js';
import type { Logger } from 'pino';
import { closeConnection } from './dedicated-connection.js';

/** What a {@link ChannelSubscriptions} listener is told. */
export interface ChannelListener {
  /** A message published on the channel, as sent. */
  message(text: string): void;
  /** Messages may have been missed (the connection dropped and is subscribed again): read the source again. */
  resync(): void;
}

/** One listener's hold on a channel. */
export interface ChannelListening {
  /** Settles once Redis confirmed the subscription: every message published after that reaches the listener. Rejects when it failed. */
  subscribed: Promise<void>;
  /** Stops passing messages to the listener (idempotent); the last one out unsubscribes. */
  stop(): void;
}

/** A subscribed channel, shared by its listeners. */
interface Channel {
  listeners: Set<ChannelListener>;
  subscribed: Promise<void>;
}

/**
 * Many listeners' pub/sub channels on one connection (a queue's `result()` waits and event
 * followers): a listener costs a SUBSCRIBE and an UNSUBSCRIBE per channel it is the first and last
 * on, not a connection of its own. Pub/sub is not durable — a message sent while the connection is
 * down is lost — so each listener keeps a durable source to read (Postgres, the event stream), and
 * is told to read it at once when the connection is back and subscribed again.
 */
export class ChannelSubscriptions {
  readonly #base: RedisConnection;
  readonly #logger: Logger | null;
  readonly #channels = new Map<string, Channel>();
  #connection: RedisConnection | null = null;
  #closed = false;

  /** `base` is duplicated, when the first listener starts, into the connection that subscribes. */
  constructor(base: RedisConnection, logger: Logger | null) {
    this.#base = base;
    this.#logger = logger;
  }

  /** How many channels are subscribed now. */
  get channels(): number {
    return this.#channels.size;
  }

  /**
   * On a Redis Cluster the channels are sharded ones (`SSUBSCRIBE`), each on the node that owns its
   * slot, as the publish script announces on them with `SPUBLISH`.
   */
  get cluster(): boolean {
    return isCluster(this.#base);
  }

  /** A channel's name as a script on `base`'s connections publishes it: with the connection's key prefix. */
  named(channel: string): string {
    return `${redisKeyPrefix(this.#base)}${channel}`;
  }

  /** Passes `listener` every message published on `channel` (named in full) from the subscription on, until `stop()`. */
  listen(channel: string, listener: ChannelListener): ChannelListening {
    if (this.#closed) return { subscribed: Promise.reject(new Error('channel subscriptions closed')), stop: () => {} };
    let held = this.#channels.get(channel);
    if (held === undefined) {
      const connection = this.#connect();
      const subscribed = (this.cluster ? connection.ssubscribe(channel) : connection.subscribe(channel)).then(() => undefined);
      const created: Channel = { listeners: new Set(), subscribed };
      this.#channels.set(channel, created);
      // A failed subscription is not reused: the next listener on the channel subscribes again.
      subscribed.catch(() => {
        if (this.#channels.get(channel) === created) this.#channels.delete(channel);
      });
      held = created;
    }
    held.listeners.add(listener);
    const own = held;
    let stopped = false;
    return {
      subscribed: own.subscribed,
      stop: () => {
        if (stopped) return;
        stopped = true;
        own.listeners.delete(listener);
        if (own.listeners.size > 0 || this.#channels.get(channel) !== own) return;
        this.#channels.delete(channel);
        // Ordered after the SUBSCRIBE on the same connection; a listener that starts meanwhile subscribes after it.
        const connection = this.#connection;
        (this.cluster ? connection?.sunsubscribe(channel) : connection?.unsubscribe(channel))?.catch(() => {});
      },
    };
  }

  /** Closes the connection (its listeners have ended: the owner closes after its signal aborted them). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#channels.clear();
    const connection = this.#connection;
    this.#connection = null;
    if (connection !== null) await closeConnection(connection);
  }

  #connect(): RedisConnection {
    if (this.#connection !== null) return this.#connection;
    // Commands wait for the connection instead of failing at once (the caller's may fail fast);
    // ioredis subscribes again by itself after a reconnect.
    const connection = duplicateRedis(this.#base, { enableOfflineQueue: true, autoResubscribe: true }, { shardedSubscriber: true });
    connection.on('error', (error: Error) => this.#logger?.debug({ err: error }, 'redis connection error (channel subscriptions)'));
    connection.on(this.cluster ? 'smessage' : 'message', (channel: string, message: string) => {
      for (const listener of this.#channels.get(channel)?.listeners ?? []) listener.message(message);
    });
    let readyBefore = false;
    connection.on('ready', () => {
      if (readyBefore) this.#resubscribed(connection, [...this.#channels.keys()]);
      readyBefore = true;
    });
    if (isCluster(connection)) {
      // A slot that moved to another node takes its sharded channels along: the old owner drops the
      // subscriptions without ioredis noticing until its next read of the slot map. Announcements in
      // between are lost; the listeners of a channel whose slot changed owner read their source again.
      const owners = new Map<string, string | undefined>();
      connection.on('refresh', () => {
        const moved: string[] = [];
        for (const channel of this.#channels.keys()) {
          const owner = connection.slots[calculateSlot(channel)]?.[0];
          if (owners.has(channel) && owners.get(channel) !== owner) moved.push(channel);
          owners.set(channel, owner);
        }
        for (const channel of owners.keys()) if (!this.#channels.has(channel)) owners.delete(channel);
        if (moved.length > 0) this.#resubscribed(connection, moved);
      });
    }
    this.#connection = connection;
    return connection;
  }

  /** Back after a drop (or a slot move): once `names` are subscribed again, each of their listeners re-reads what it may have missed. */
  #resubscribed(connection: RedisConnection, names: string[]): void {
    if (names.length === 0) return;
    // SUBSCRIBE is idempotent: this one's answer comes after ioredis's own re-subscription.
    (this.cluster ? connection.ssubscribe(...names) : connection.subscribe(...names)).then(
      () => {
        for (const name of names) for (const listener of this.#channels.get(name)?.listeners ?? []) listener.resync();
      },
      () => {},
    );
  }
}
