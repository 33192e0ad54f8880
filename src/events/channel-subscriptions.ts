import type { Redis } from 'ioredis';
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
  readonly #base: Redis;
  readonly #logger: Logger | null;
  readonly #channels = new Map<string, Channel>();
  #connection: Redis | null = null;
  #closed = false;

  /** `base` is duplicated, when the first listener starts, into the connection that subscribes. */
  constructor(base: Redis, logger: Logger | null) {
    this.#base = base;
    this.#logger = logger;
  }

  /** How many channels are subscribed now. */
  get channels(): number {
    return this.#channels.size;
  }

  /** A channel's name as a script on `base`'s connections publishes it: with the connection's key prefix. */
  named(channel: string): string {
    return `${this.#base.options.keyPrefix ?? ''}${channel}`;
  }

  /** Passes `listener` every message published on `channel` (named in full) from the subscription on, until `stop()`. */
  listen(channel: string, listener: ChannelListener): ChannelListening {
    if (this.#closed) return { subscribed: Promise.reject(new Error('channel subscriptions closed')), stop: () => {} };
    let held = this.#channels.get(channel);
    if (held === undefined) {
      const subscribed = this.#connect().subscribe(channel).then(() => undefined);
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
        this.#connection?.unsubscribe(channel).catch(() => {});
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

  #connect(): Redis {
    if (this.#connection !== null) return this.#connection;
    // Commands wait for the connection instead of failing at once (the caller's may fail fast);
    // ioredis subscribes again by itself after a reconnect.
    const connection = this.#base.duplicate({ enableOfflineQueue: true, autoResubscribe: true });
    connection.on('error', (error: Error) => this.#logger?.debug({ err: error }, 'redis connection error (channel subscriptions)'));
    connection.on('message', (channel: string, message: string) => {
      for (const listener of this.#channels.get(channel)?.listeners ?? []) listener.message(message);
    });
    let readyBefore = false;
    connection.on('ready', () => {
      if (readyBefore) this.#resubscribed(connection);
      readyBefore = true;
    });
    this.#connection = connection;
    return connection;
  }

  /** Back after a drop: once every channel is subscribed again, each listener re-reads what it may have missed. */
  #resubscribed(connection: Redis): void {
    const names = [...this.#channels.keys()];
    if (names.length === 0) return;
    // SUBSCRIBE is idempotent: this one's answer comes after ioredis's own re-subscription.
    connection.subscribe(...names).then(
      () => {
        for (const name of names) for (const listener of this.#channels.get(name)?.listeners ?? []) listener.resync();
      },
      () => {},
    );
  }
}
