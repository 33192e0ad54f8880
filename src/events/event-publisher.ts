import { connectionLayout, duplicateRedis, redisKeyPrefix, type RedisConnection } from '../fleet/redis-connection.js';
import { calculateSlot, type RedisLayout } from '../fleet/redis-layout.js';
import { StateConflictError } from '../core/errors/index.js';
import { eventDeletedKey, eventFinishedKey, eventSeqKey, eventStreamKey } from '../fleet/fleet-keys.js';
import {
  resolveEventPublisherOptions,
  type EventPublishErrorContext,
  type EventPublisherConfig,
  type EventPublisherOptions,
} from './event-publisher-options.js';
import type { FleetEvent } from '../fleet/fleet-events.js';
import { EventWriter } from './event-writer.js';
import { publishEventsCommand, rejectInFlightOnClose } from './publish-events-script.js';
import { PublisherRunSink, type RunEventSink, type SinkHost } from './run-event-sink.js';
import { SessionChannel, type PublisherCounters } from './session-channel.js';

/**
 * The connection a publisher should own: a duplicate of `redis` with ioredis's re-sending of
 * unanswered commands switched off. The publish script is not idempotent (it allocates `seq`s), and a
 * call whose reply a dropped connection lost may already have run: re-sent after the reconnect, it
 * would write its events a second time, numbered on, with no hole to show it. Rejected instead, the
 * publisher counts them lost and the next write leaves a hole, which subscribers see as a gap (I7).
 * Commands not yet sent when the connection dropped are still sent after it reconnects — also when
 * `redis` itself fails fast (`enableOfflineQueue: false`): the duplicate queues them while it connects.
 */
export function publisherConnection(redis: RedisConnection): RedisConnection {
  const connection = duplicateRedis(redis, { autoResendUnfulfilledCommands: false, enableOfflineQueue: true });
  rejectInFlightOnClose(connection);
  return connection;
}

/**
 * Publishes session events to Redis streams (docs/client.md, "Subscribing").
 *
 * Wire format, fixed because other languages read it: one stream per session at
 * `<queue>:events:<sessionId>`; each entry has exactly two fields, `type` (snake_case) and `data`, a
 * JSON object carrying `seq` (per session, 1, 2, 3 … gapless, allocated in Redis, in stream order),
 * `sessionId`, `inputSeq` (number or null) and the event's own camelCase payload fields.
 *
 * Each session has a write-behind queue; the batches of every session ready in the same turn of the
 * event loop share one script call (all keys must live on one Redis node). Retention is
 * bounded by `maxLen` and `idleExpirySeconds`. A lost event (Redis error, overflow, a payload JSON
 * cannot carry) leaves the stream incomplete: it is counted in `dropped` and reported to `onError`,
 * never thrown into the loop; the session's next successful write skips its `seq` numbers, so
 * subscribers see a hole (a `gap`) and rebuild from Postgres, which holds the truth.
 *
 * An input's `input_finished` is written at most once (I6): one published again for an input whose
 * finish is already on the stream — a holder that stalled past its lease and woke after the next
 * holder republished it — is left out by the script, takes no `seq`, and is counted in
 * `duplicateFinishes`. Other event types are never deduplicated.
 */
export class RedisEventPublisher {
  private readonly config: EventPublisherConfig;
  private readonly writer: EventWriter;
  private readonly channels = new Map<string, SessionChannel>();
  /** Channels that went idle, oldest first (a channel in use again stays listed until it is the oldest). */
  private readonly idle = new Map<string, SessionChannel>();
  /** Seq numbers owed by forgotten channels (entries they lost), oldest first: the session's next write burns them. */
  private readonly owed = new Map<string, number>();
  private readonly counters: PublisherCounters = { published: 0, dropped: 0, coalesced: 0, duplicateFinishes: 0, fenced: 0 };
  private readonly host: SinkHost;
  /** Where the streams are: on a Redis Cluster under their queue shard's hash tag, one call per shard. */
  private readonly layout: RedisLayout;
  private closing: Promise<void> | null = null;

  /** @param redis a connection the publisher writes on; closed by `close()` only with `ownsConnection`. */
  constructor(
    private readonly redis: RedisConnection,
    options: EventPublisherOptions,
  ) {
    this.config = resolveEventPublisherOptions(options);
    this.layout = connectionLayout(redis, this.config.queueName, this.config.queueShards);
    const prefix = redisKeyPrefix(redis);
    this.writer = new EventWriter(
      publishEventsCommand(redis, { maxLen: this.config.maxLen, idleExpirySeconds: this.config.idleExpirySeconds }),
      this.layout.cluster ? (batch) => calculateSlot(prefix + batch.target.streamKey) : null,
    );
    this.host = {
      enqueue: (sessionId, inputSeq, event, fence) => this.enqueue(sessionId, inputSeq, event, fence),
      flushSession: (sessionId) => this.flushSession(sessionId),
      drop: (sessionId, event, stage, error) => this.drop(sessionId, event, stage, error),
    };
  }

  /** Stream entries written so far (a merged delta counts once). */
  get published(): number {
    return this.counters.published;
  }

  /** Stream entries lost so far: failed batches, unserialisable payloads, overflow, emits after close. */
  get dropped(): number {
    return this.counters.dropped;
  }

  /** Sessions the publisher holds a write queue for: those with events in hand, and up to {@link IDLE_CHANNELS_KEPT} idle ones. */
  get sessionChannels(): number {
    return this.channels.size;
  }

  /** Deltas merged into an earlier one instead of getting their own entry. */
  get coalesced(): number {
    return this.counters.coalesced;
  }

  /** `input_finished` events not written because their input's finish was already on the stream. */
  get duplicateFinishes(): number {
    return this.counters.duplicateFinishes;
  }

  /** Entries refused because they were written under a lease of a session deleted since (also counted in `dropped`). */
  get fenced(): number {
    return this.counters.fenced;
  }

  /**
   * A sink for one run of `sessionId`; every event it emits carries `inputSeq`. `fence`: the lease
   * token the run holds (see {@link publish}).
   */
  runSink(sessionId: string, inputSeq: number | null, fence?: number): RunEventSink {
    return new PublisherRunSink(this.host, sessionId, inputSeq, fence);
  }

  /**
   * Publishes one event now, after anything already queued for the session, and resolves with its
   * stream id — or with '' for an `input_finished` that was not written because its input's finish
   * is already on the stream. Rejects (and reports to `onError`) when the write fails or the
   * publisher is closed.
   *
   * `fence`: the lease token of the worker writing it. Once the session is deleted, events written
   * under that token or an older one are refused (`lease.lost`, stage `fenced`): a worker still
   * running an input of the deleted session must not write into the stream of a session created
   * again under the same id. Events without one (a producer's `input_accepted`) are not fenced.
   */
  publish(sessionId: string, inputSeq: number | null, event: FleetEvent, fence?: number): Promise<string> {
    if (this.closing !== null) {
      const error = closedError();
      this.drop(sessionId, event, 'closed', error);
      return Promise.reject(error);
    }
    return this.channel(sessionId).publish(inputSeq, event, fence);
  }

  /** Resolves once every event queued so far, in every session, is written or dropped. */
  async flush(): Promise<void> {
    await Promise.all([...this.channels.values()].map((channel) => channel.flush()));
  }

  /** Flushes every session, refuses further events, then quits the connection if it owns it. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await this.flush();
    if (!this.config.ownsConnection) return;
    // QUIT only on a usable connection: on one that is reconnecting it would wait behind the offline
    // queue for as long as Redis is down.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private enqueue(sessionId: string, inputSeq: number | null, event: FleetEvent, fence: number | undefined): void {
    if (this.closing !== null) return this.drop(sessionId, event, 'closed', closedError());
    this.channel(sessionId).emit(inputSeq, event, fence);
  }

  private flushSession(sessionId: string): Promise<void> {
    return this.channels.get(sessionId)?.flush() ?? Promise.resolve();
  }

  private drop(sessionId: string, event: FleetEvent, stage: 'closed' | 'encode', error: Error): void {
    this.counters.dropped += 1;
    this.report(error, { sessionId, stage, events: 1, types: [String(event?.type)] });
  }

  private channel(sessionId: string): SessionChannel {
    let channel = this.channels.get(sessionId);
    if (channel === undefined) {
      channel = new SessionChannel({
        sessionId,
        target: {
          streamKey: eventStreamKey(this.layout, sessionId),
          seqKey: eventSeqKey(this.layout, sessionId),
          finishedKey: eventFinishedKey(this.layout, sessionId),
          deletedKey: eventDeletedKey(this.layout, sessionId),
        },
        config: this.config,
        writer: this.writer,
        counters: this.counters,
        report: (error, context) => this.report(error, context),
        onIdle: (idle) => this.retire(sessionId, idle),
        owed: this.owed.get(sessionId) ?? 0,
      });
      this.owed.delete(sessionId);
      this.channels.set(sessionId, channel);
    }
    return channel;
  }

  /**
   * Keeps an idle channel for reuse: a running session's channel empties after most of its writes,
   * and building it again for the next event (keys, coalescer, closures) was a measurable share of
   * the worker's allocation. Beyond {@link IDLE_CHANNELS_KEPT} idle channels the oldest is forgotten,
   * so finished sessions do not accumulate. A forgotten channel that lost entries leaves only their
   * count behind ({@link OWED_SESSIONS_KEPT} sessions at most), so the session's next write still
   * shows subscribers the hole. (Until session 13 such a channel never counted as idle and was kept
   * for as long as the process ran.)
   */
  private retire(sessionId: string, channel: SessionChannel): void {
    this.idle.delete(sessionId);
    this.idle.set(sessionId, channel);
    if (this.idle.size <= IDLE_CHANNELS_KEPT) return;
    const [oldestId, oldest] = this.idle.entries().next().value as [string, SessionChannel];
    this.idle.delete(oldestId);
    // One in use again since it went idle is listed anew when it next empties.
    if (!oldest.forgettable || this.channels.get(oldestId) !== oldest) return;
    this.channels.delete(oldestId);
    if (oldest.owedSeqs === 0) return;
    this.owed.set(oldestId, oldest.owedSeqs);
    // Past the bound the oldest count is dropped: that session's next write shows no hole.
    if (this.owed.size > OWED_SESSIONS_KEPT) this.owed.delete(this.owed.keys().next().value as string);
  }

  /** Hands a loss to `onError`; a throwing reporter is contained so it cannot reach the loop. */
  private report(error: Error, context: EventPublishErrorContext): void {
    try {
      this.config.onError(error, context);
    } catch {
      // The reporter is the last line; there is nowhere safer to send its own failure.
    }
  }
}

/** Idle session channels a publisher keeps for reuse. */
export const IDLE_CHANNELS_KEPT = 1_024;

/** Most forgotten sessions whose owed seq numbers (lost entries) are remembered: a number each. */
export const OWED_SESSIONS_KEPT = 65_536;

function closedError(): StateConflictError {
  return new StateConflictError('event publisher is closed');
}
