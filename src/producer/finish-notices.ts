import type { ChannelListening, ChannelSubscriptions } from '../events/channel-subscriptions.js';
import type { StreamEvent } from '../fleet/fleet-events.js';
import { parseStreamEntry } from '../events/stream-entry.js';
import { finishChannel, type QueueKeys } from '../fleet/fleet-keys.js';

/** What a {@link FinishNotices} listener is told. */
export interface FinishListener {
  /** An `input_finished` was written to the session's stream: the entry as announced, parsed (not yet checked). */
  finished(event: StreamEvent): void;
  /** Announcements may have been missed (the connection dropped and is subscribed again): read Postgres. */
  resync(): void;
}

/**
 * The finishes announced on the sessions' finish channels (`finishChannel`, written by the publish
 * script with each `input_finished`), for `result()`'s waits, on the queue's one subscribed
 * connection ({@link ChannelSubscriptions}): a wait costs a SUBSCRIBE and an UNSUBSCRIBE (one of
 * each per session with waits), not a connection of its own and a blocked read woken by each of its
 * session's events. Pub/sub is not durable, so waits keep re-reading Postgres, and are told to at
 * once when the connection is back.
 */
export class FinishNotices {
  readonly #channels: ChannelSubscriptions;
  readonly #queueName: QueueKeys;

  constructor(channels: ChannelSubscriptions, queueName: QueueKeys) {
    this.#channels = channels;
    this.#queueName = queueName;
  }

  /** Passes `listener` every finish announced for `sessionId` from the subscription on, until `stop()`. */
  listen(sessionId: string, listener: FinishListener): ChannelListening {
    return this.#channels.listen(this.#channels.named(finishChannel(this.#queueName, sessionId)), {
      message: (text) => {
        const space = text.indexOf(' ');
        if (space < 1) return;
        listener.finished(parseStreamEntry(sessionId, [text.slice(0, space), ['type', 'input_finished', 'data', text.slice(space + 1)]]));
      },
      resync: () => listener.resync(),
    });
  }
}
