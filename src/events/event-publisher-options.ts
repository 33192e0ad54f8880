import { ConfigInvalidError } from '../core/errors/index.js';

/** What was lost when the publisher reports an error through `onError`. */
export interface EventPublishErrorContext {
  sessionId: string;
  /**
   * `encode`: an event's payload was not JSON-serialisable. `write`: a batch failed in Redis.
   * `overflow`: the session's queue was full (Redis too slow or down). `closed`: emitted after close.
   * `fenced`: written under a lease of a session that was deleted since (`sessions.delete`); refused
   * so that they cannot reach a session created again under the same id.
   */
  stage: 'encode' | 'write' | 'overflow' | 'closed' | 'fenced';
  /** How many stream entries were lost (a merged delta counts once). */
  events: number;
  /** Their event types, in order. */
  types: string[];
}

/**
 * Options of {@link RedisEventPublisher}. Events that are lost (see `onError`) leave the session's
 * stream incomplete; subscribers detect that from the `seq` numbering or a `gap` and rebuild from
 * Postgres, which holds the truth.
 */
export interface EventPublisherOptions {
  /** The queue name (`LOOPFLEET_QUEUE`); streams live at `<queue>:events:<sessionId>`. Required. */
  queueName: string;
  /**
   * On a Redis Cluster, the queue shards (`LOOPFLEET_QUEUE_SHARDS`): a session's stream lives under
   * its shard's hash tag, so this must match the workers'. Ignored on one Redis node. Default 1.
   */
  queueShards?: number;
  /** Approximate cap on each session stream, in entries (`XTRIM MAXLEN ~`). Default 10,000. */
  maxLen?: number;
  /**
   * A session's stream and its seq counter expire after this many seconds without a new event.
   * Default 604,800 (7 days).
   */
  idleExpirySeconds?: number;
  /** How long a text delta waits for followers to merge with, in milliseconds. 0 disables merging. Default 25. */
  coalesceMs?: number;
  /** Longest merged delta text, in characters (UTF-16 code units). Default 2,048. */
  coalesceMaxChars?: number;
  /** Most stream entries written by one script call, in entries. Default 500. */
  maxBatchEvents?: number;
  /**
   * Most entries waiting for Redis per session, in entries; beyond it new events are dropped and
   * reported (stage `overflow`) instead of growing memory while Redis is down. Default 10,000.
   */
  maxQueuedEvents?: number;
  /** Whether `close()` also quits the Redis connection. Default false: the caller owns it. */
  ownsConnection?: boolean;
  /**
   * Told about every lost event; the worker logs it. Never throws into the loop: an exception here
   * is swallowed. Default: a process warning.
   */
  onError?: (error: Error, context: EventPublishErrorContext) => void;
  /** Milliseconds clock for the coalescing window. Default `Date.now`. */
  now?: () => number;
}

/** {@link EventPublisherOptions} resolved and validated: no optional fields. */
export interface EventPublisherConfig {
  queueName: string;
  queueShards: number;
  maxLen: number;
  idleExpirySeconds: number;
  coalesceMs: number;
  coalesceMaxChars: number;
  maxBatchEvents: number;
  maxQueuedEvents: number;
  ownsConnection: boolean;
  onError: (error: Error, context: EventPublishErrorContext) => void;
  now: () => number;
}

/** Defaults of {@link EventPublisherOptions}. */
export const EVENT_PUBLISHER_DEFAULTS = {
  maxLen: 10_000,
  idleExpirySeconds: 604_800,
  coalesceMs: 25,
  coalesceMaxChars: 2048,
  maxBatchEvents: 500,
  maxQueuedEvents: 10_000,
} as const;

/** Resolves and validates once, at construction; throws `config.invalid` naming the field. */
export function resolveEventPublisherOptions(options: EventPublisherOptions): EventPublisherConfig {
  if (typeof options.queueName !== 'string' || options.queueName.length === 0) {
    throw new ConfigInvalidError('event publisher: queueName must be a non-empty string');
  }
  const d = EVENT_PUBLISHER_DEFAULTS;
  return {
    queueName: options.queueName,
    queueShards: integer('queueShards', options.queueShards ?? 1, 1),
    maxLen: integer('maxLen', options.maxLen ?? d.maxLen, 1),
    idleExpirySeconds: integer('idleExpirySeconds', options.idleExpirySeconds ?? d.idleExpirySeconds, 1),
    coalesceMs: integer('coalesceMs', options.coalesceMs ?? d.coalesceMs, 0),
    coalesceMaxChars: integer('coalesceMaxChars', options.coalesceMaxChars ?? d.coalesceMaxChars, 1),
    maxBatchEvents: integer('maxBatchEvents', options.maxBatchEvents ?? d.maxBatchEvents, 1),
    maxQueuedEvents: integer('maxQueuedEvents', options.maxQueuedEvents ?? d.maxQueuedEvents, 1),
    ownsConnection: options.ownsConnection ?? false,
    onError: options.onError ?? warnOnError,
    now: options.now ?? Date.now,
  };
}

function integer(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new ConfigInvalidError(`event publisher: ${name} must be an integer >= ${min}, got ${String(value)}`, {
      details: { option: name },
    });
  }
  return value;
}

/** Without an `onError`, lost events still surface once per failure, as a process warning. */
function warnOnError(error: Error, context: EventPublishErrorContext): void {
  process.emitWarning(`loopfleet: ${context.events} event(s) of session ${context.sessionId} lost (${context.stage}): ${error.message}`, {
    code: 'LOOPFLEET_EVENTS_LOST',
  });
}
