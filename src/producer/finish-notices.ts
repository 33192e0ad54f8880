import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeConnection } from '../events/dedicated-connection.js';
import type { StreamEvent } from '../events/fleet-events.js';
import { parseStreamEntry } from '../events/stream-entry.js';
import { finishChannel } from './fleet-keys.js';

/** What a {@link FinishNotices} listener is told. */
export interface FinishListener {
  /** An `input_finished` was written to the session's stream: the entry as announced, parsed (not yet checked). */
  finished(event: StreamEvent): void;
  /** Announcements may have been missed (the connection dropped and is subscribed again): read Postgres. */
  resync(): void;
}

/** One listener's hold on its session's channel. */
export interface FinishListening {
  /** Settles once Redis confirmed the subscription: every finish written after that reaches the listener. Rejects when it failed. */
  subscribed: Promise<void>;
  /** Stops passing announcements to the listener (idempotent); the last one out unsubscribes. */
  stop(): void;
}

/** A subscribed channel: one session's, shared by its listeners. */
interface Channel {
  sessionId: string;
  listeners: Set<FinishListener>;
  subscribed: Promise<void>;
}

/**
 * The finishes announced on the sessions' finish channels (`finishChannel`, written by the publish
 * script with each `input_finished`), for `result()`'s waits. One connection per queue carries every
 * wait's subscription, however many wait at once: a wait costs a SUBSCRIBE and an UNSUBSCRIBE (one
 * of each per session with waits), not a connection of its own and a blocked read woken by each of
 * its session's events. Pub/sub is not durable — a message sent while the connection is down is
 * lost — so waits keep re-reading Postgres, and are told to at once when the connection is back.
 */
export class FinishNotices {
  readonly #base: Redis;
  readonly #queueName: string;
  readonly #logger: Logger | null;
  readonly #channels = new Map<string, Channel>();
  #connection: Redis | null = null;
  #closed = false;

  /** `base` is duplicated, when the first wait starts, into the connection that subscribes. */
  constructor(base: Redis, queueName: string, logger: Logger | null) {
    this.#base = base;
    this.#queueName = queueName;
    this.#logger = logger;
  }

  /** How many sessions' channels are subscribed now. */
  get channels(): number {
    return this.#channels.size;
  }

  /** Passes `listener` every finish announced for `sessionId` from the subscription on, until `stop()`. */
  listen(sessionId: string, listener: FinishListener): FinishListening {
    if (this.#closed) return { subscribed: Promise.reject(new Error('finish notices closed')), stop: () => {} };
    const name = this.#channelName(sessionId);
    let channel = this.#channels.get(name);
    if (channel === undefined) {
      const subscribed = this.#connect().subscribe(name).then(() => undefined);
      channel = { sessionId, listeners: new Set(), subscribed };
      this.#channels.set(name, channel);
      const created = channel;
      // A failed subscription is not reused: the next wait on the session subscribes again.
      subscribed.catch(() => {
        if (this.#channels.get(name) === created) this.#channels.delete(name);
      });
    }
    channel.listeners.add(listener);
    const held = channel;
    let stopped = false;
    return {
      subscribed: held.subscribed,
      stop: () => {
        if (stopped) return;
        stopped = true;
        held.listeners.delete(listener);
        if (held.listeners.size > 0 || this.#channels.get(name) !== held) return;
        this.#channels.delete(name);
        // Ordered after the SUBSCRIBE on the same connection; a wait that starts meanwhile subscribes after it.
        this.#connection?.unsubscribe(name).catch(() => {});
      },
    };
  }

  /** Closes the connection (the waits have ended: the queue closes after its signal aborted them). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#channels.clear();
    const connection = this.#connection;
    this.#connection = null;
    if (connection !== null) await closeConnection(connection);
  }

  #channelName(sessionId: string): string {
    // The script announces on the stream key as it wrote it, the connection's key prefix included.
    return `${this.#base.options.keyPrefix ?? ''}${finishChannel(this.#queueName, sessionId)}`;
  }

  #connect(): Redis {
    if (this.#connection !== null) return this.#connection;
    // Commands wait for the connection instead of failing at once (the caller's may fail fast);
    // ioredis subscribes again by itself after a reconnect.
    const connection = this.#base.duplicate({ enableOfflineQueue: true, autoResubscribe: true });
    connection.on('error', (error: Error) => this.#logger?.debug({ err: error }, 'redis connection error (finish notices)'));
    connection.on('message', (name: string, message: string) => this.#deliver(name, message));
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

  #deliver(name: string, message: string): void {
    const channel = this.#channels.get(name);
    if (channel === undefined) return;
    const space = message.indexOf(' ');
    if (space < 1) return;
    const event = parseStreamEntry(channel.sessionId, [message.slice(0, space), ['type', 'input_finished', 'data', message.slice(space + 1)]]);
    for (const listener of channel.listeners) listener.finished(event);
  }
}
