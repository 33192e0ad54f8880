import { duplicateRedis, type RedisConnection } from '../fleet/redis-connection.js';
import { InfrastructureError, isLoopfleetError } from '../core/errors/index.js';
import { whileLinked, type LinkedIteration } from '../core/linked-signal.js';
import { eventStreamKey, type QueueKeys } from '../fleet/fleet-keys.js';
import type { StreamEvent, StreamGap, StreamItem } from '../fleet/fleet-events.js';
import { AbortableReads, closeConnection, ReadAborted } from './dedicated-connection.js';
import { parseStreamEntry, type RawStreamEntry, type RawXReadReply } from './stream-entry.js';
import { detectGap, SeqGapTracker } from './stream-gap.js';
import { assertCursor, isStreamStart, ONLY_NEW } from './stream-id.js';

/** Options of {@link readSessionEvents}. */
export interface ReadSessionEventsOptions {
  /** The queue name (`LOOPFLEET_QUEUE`). */
  queueName: QueueKeys;
  sessionId: string;
  /**
   * Read the events after this stream id: a cursor received earlier, `'0'` for everything retained,
   * or `'$'` for only events published after the call. Default `'$'`.
   */
  after?: string;
  /**
   * How long one `XREAD BLOCK` waits for new events, in milliseconds (a follower on shared tails:
   * how long it waits without an announcement before reading anyway). Default 5,000.
   */
  blockMs?: number;
  /** Most entries fetched per read, in entries. Default 100. */
  count?: number;
  /** Ends the iteration promptly, even during a blocked read (the iterator then just returns). */
  signal?: AbortSignal;
}

/** Options of {@link readRange}. */
export interface ReadRangeOptions {
  /** Return entries after this stream id; `'0'` (default) for the oldest retained. */
  after?: string;
  /** Most entries returned, in entries. Default 100. */
  count?: number;
}

/**
 * Follows one session's event stream (I7), forever until `signal` aborts
 * or the caller stops iterating. Uses its own duplicated connection, because `XREAD BLOCK` holds a
 * connection for the whole wait; it is closed when the iteration ends — `break`/`return()`, abort,
 * or an error. (An iterator that is merely dropped keeps it: stop it explicitly.) `return()` and the
 * `signal` end it at once, also while a read is blocked (`whileLinked`). (`openTail` replaces that
 * connection: a `SessionQueue` passes its shared tails, `NotifiedTails`.)
 *
 * Yields a `gap` first when a concrete cursor is older than the retained stream or the stream is
 * gone, and whenever `seq` jumps while reading (a slow reader overtaken by trimming, lost events);
 * on a gap, rebuild what was missed from Postgres, then carry on with the events that follow.
 * Redis errors are thrown as `system.infrastructure`; a bad cursor as `input.invalid`.
 *
 * `'$'` is taken at the call, not when iteration starts: the newest entry is read at once, on the
 * caller's connection (already connected, and ahead of whatever the caller sends on it next, such as
 * an `add`), so an event published between the call and the first `next()` is not skipped.
 */
export function readSessionEvents(redis: RedisConnection, options: ReadSessionEventsOptions, openTail?: OpenTail): LinkedIteration<StreamItem> {
  const newest = options.after === undefined || options.after === ONLY_NEW ? readNewest(redis, options.queueName, options.sessionId) : null;
  return whileLinked([options.signal], (signal) => followSessionEvents(redis, Object.assign({}, options, { signal }), newest, openTail));
}

/** The newest entry of a session's stream, read now (for a `'$'` taken at a call); its failure is rethrown where it is awaited. */
export function readNewest(redis: RedisConnection, queueName: QueueKeys, sessionId: string): Promise<RawStreamEntry | undefined> {
  const newest = newestEntry(redis, eventStreamKey(queueName, sessionId));
  newest.catch(() => {});
  return newest;
}

/**
 * {@link readSessionEvents} with `'$'` already resolved by {@link readNewest} (null: the cursor is
 * concrete), for a caller that starts the read when it is called but the iteration later.
 */
export async function* followSessionEvents(
  redis: RedisConnection,
  options: ReadSessionEventsOptions,
  newest: Promise<RawStreamEntry | undefined> | null,
  openTail: OpenTail = blockingTail(redis),
): AsyncGenerator<StreamItem, void, undefined> {
  const after = options.after ?? ONLY_NEW;
  assertCursor(after, { allowOnlyNew: true });
  const { signal } = options;
  // A function, not a narrowed property read: the signal flips while we await.
  const aborted = (): boolean => signal?.aborted === true;
  if (aborted()) return;
  const streamKey = eventStreamKey(options.queueName, options.sessionId);
  let tail: StreamTail | null = null;
  const reads = new AbortableReads(signal, () => tail?.interrupt());
  try {
    const opening = Promise.resolve(openTail(options.sessionId, streamKey, { blockMs: options.blockMs ?? 5000, count: options.count ?? 100 }));
    // Opened after an abort, it is closed at once: nobody else holds it.
    opening.then((opened) => (aborted() ? opened.close() : undefined), () => {});
    tail = await reads.read(opening);
    const tracker = new SeqGapTracker();
    let cursor = await reads.read(startCursor(tail.connection, streamKey, after, tracker, newest));
    if (typeof cursor !== 'string') {
      yield cursor.gap;
      cursor = cursor.gap.resumeFrom;
    }
    while (!aborted()) {
      const reply = await reads.read(tail.next(cursor));
      for (const entry of reply?.[0]?.[1] ?? []) {
        const event = parseStreamEntry(options.sessionId, entry);
        const gap = tracker.next(event);
        if (gap !== null) yield gap;
        yield event;
        cursor = event.id;
      }
    }
  } catch (error) {
    if (error instanceof ReadAborted || aborted()) return;
    throw readError(error, streamKey);
  } finally {
    reads.dispose();
    await tail?.close();
  }
}

/** How a follower reads a stream after its cursor check: its connection, and how it waits for entries. */
export interface StreamTail {
  /** Where the follower's first reads go (where to start, and the cursor's check). */
  readonly connection: RedisConnection;
  /** Up to `count` entries after `cursor`, once there are some; may answer none (null) after a while without. */
  next(cursor: string): Promise<RawXReadReply>;
  /** Ends a wait at once: the follower's signal aborted (its pending read is abandoned). */
  interrupt(): void;
  /** Releases what the tail holds. */
  close(): Promise<void>;
}

/** How much a tail reads at once and how long it waits without news, in entries and milliseconds. */
export interface TailReads {
  count: number;
  blockMs: number;
}

/** Opens the tail of one follower. */
export type OpenTail = (sessionId: string, streamKey: string, reads: TailReads) => StreamTail | Promise<StreamTail>;

/**
 * A connection of the follower's own (`redis` duplicated), blocked in `XREAD BLOCK` between entries:
 * the way that needs nothing but the stream. Dropped at once on abort.
 */
export function blockingTail(redis: RedisConnection): OpenTail {
  return (_sessionId, streamKey, reads) => {
    // A new connection: commands wait for it to be ready, though the caller's client may fail fast
    // (`enableOfflineQueue: false`, as BullMQ advises for a producer's).
    const connection = duplicateRedis(redis, { enableOfflineQueue: true });
    // Failures surface as rejected commands; without a listener ioredis would also print each one.
    connection.on('error', () => {});
    return {
      connection,
      next: (cursor) => connection.xread('COUNT', reads.count, 'BLOCK', reads.blockMs, 'STREAMS', streamKey, cursor) as Promise<RawXReadReply>,
      interrupt: () => connection.disconnect(),
      close: () => closeConnection(connection),
    };
  };
}

/** The stream's newest entry, or undefined when it is empty or gone. */
async function newestEntry(redis: RedisConnection, streamKey: string): Promise<RawStreamEntry | undefined> {
  const [last] = (await redis.xrevrange(streamKey, '+', '-', 'COUNT', 1)) as RawStreamEntry[];
  return last;
}

/**
 * Where reading starts: `$` becomes the last id as of the call (`newest`, so events published between
 * the call and the first read, or between two blocked reads, are not skipped); a concrete cursor is
 * checked for a gap. The entry the cursor names primes the tracker with its `seq`, so a hole right
 * after it is seen too.
 */
async function startCursor(
  redis: RedisConnection,
  streamKey: string,
  after: string,
  tracker: SeqGapTracker,
  newest: Promise<RawStreamEntry | undefined> | null,
): Promise<string | { gap: StreamGap }> {
  if (after === ONLY_NEW) {
    const last = await (newest ?? newestEntry(redis, streamKey));
    if (last === undefined) return '0-0';
    tracker.next(parseStreamEntry('', last));
    return last[0];
  }
  if (isStreamStart(after)) return after;
  const gap = await detectGap(redis, streamKey, after);
  if (gap !== null) return { gap };
  const own = (await redis.xrange(streamKey, after, after)) as RawStreamEntry[];
  if (own[0] !== undefined) tracker.next(parseStreamEntry('', own[0]));
  return after;
}

/** The newest event's stream id, or null when the session's stream is empty or gone. */
export async function lastEventId(redis: RedisConnection, queueName: QueueKeys, sessionId: string): Promise<string | null> {
  const streamKey = eventStreamKey(queueName, sessionId);
  try {
    const last = (await redis.xrevrange(streamKey, '+', '-', 'COUNT', 1)) as RawStreamEntry[];
    return last[0]?.[0] ?? null;
  } catch (error) {
    throw readError(error, streamKey);
  }
}

/**
 * One page of events after a cursor, without blocking (`XRANGE`), for clients that poll. Pass the
 * last returned id as the next `after`; an empty page means caught up. Does not check for gaps:
 * pollers compare `seq` or call {@link detectGap} themselves.
 */
export async function readRange(
  redis: RedisConnection,
  queueName: QueueKeys,
  sessionId: string,
  options: ReadRangeOptions = {},
): Promise<StreamEvent[]> {
  const after = options.after ?? '0';
  assertCursor(after, { allowOnlyNew: false });
  const streamKey = eventStreamKey(queueName, sessionId);
  const start = isStreamStart(after) ? '-' : `(${after}`;
  try {
    const entries = (await redis.xrange(streamKey, start, '+', 'COUNT', options.count ?? 100)) as RawStreamEntry[];
    return entries.map((entry) => parseStreamEntry(sessionId, entry));
  } catch (error) {
    throw readError(error, streamKey);
  }
}

/** Converts once, at this boundary; our own typed errors pass through. */
function readError(error: unknown, streamKey: string): Error {
  if (isLoopfleetError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new InfrastructureError(`reading event stream ${streamKey} failed: ${message}`, { cause: error, details: { streamKey } });
}
