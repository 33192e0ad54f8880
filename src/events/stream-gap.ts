import type { Redis } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type { StreamEvent, StreamGap } from '../fleet/fleet-events.js';
import { isMalformed } from './stream-entry.js';
import { compareStreamIds, FROM_START } from './stream-id.js';

/** What gap detection needs from `XINFO STREAM`. */
export interface StreamRetention {
  /** Oldest entry still held; null for an existing but empty stream. */
  firstEntryId: string | null;
  /** Newest id this stream ever generated (entries may since be deleted). */
  lastGeneratedId: string;
  /** Newest id removed by XDEL (Redis ≥ 7; `0-0` before, or when none was). XTRIM does not move it. */
  maxDeletedId: string;
}

/**
 * Decides whether a subscriber resuming after `after` missed events (I7). Conservative:
 * a cursor older than the oldest retained entry is a gap even when only the cursor's own entry was
 * trimmed, because ids alone cannot tell which entry came right after it.
 *
 * - the stream never generated `after`: it is from an earlier incarnation of the stream (Redis lost
 *   it and it was re-created) — read the new one from the start;
 * - an entry after the cursor was deleted, or the cursor is older than everything retained — go on
 *   after the cursor, which reads from the oldest retained entry.
 */
export function decideGap(after: string, retention: StreamRetention): StreamGap | null {
  const firstAvailable = retention.firstEntryId;
  if (compareStreamIds(retention.lastGeneratedId, after) < 0) {
    return { kind: 'gap', after, firstAvailable, resumeFrom: FROM_START };
  }
  const deletedAfter = compareStreamIds(retention.maxDeletedId, after) > 0;
  const olderThanRetained =
    firstAvailable === null ? compareStreamIds(retention.lastGeneratedId, after) > 0 : compareStreamIds(firstAvailable, after) > 0;
  if (deletedAfter || olderThanRetained) return { kind: 'gap', after, firstAvailable, resumeFrom: after };
  return null;
}

/**
 * Checks the stream at `streamKey` before resuming after the concrete id `after`. A missing stream
 * (expired, or lost with Redis) is a gap that resumes from the start, so events published after it
 * was re-created are still read.
 */
export async function detectGap(redis: RedisConnection, streamKey: string, after: string): Promise<StreamGap | null> {
  const retention = await readRetention(redis, streamKey);
  if (retention === null) return { kind: 'gap', after, firstAvailable: null, resumeFrom: FROM_START };
  return decideGap(after, retention);
}

/** `XINFO STREAM`, or null when the key does not exist. */
export async function readRetention(redis: RedisConnection, streamKey: string): Promise<StreamRetention | null> {
  let reply: unknown;
  try {
    reply = await redis.xinfo('STREAM', streamKey);
  } catch (error) {
    if (error instanceof Error && /no such key/i.test(error.message)) return null;
    throw error;
  }
  return parseRetention(reply);
}

/** Reads the fields of an `XINFO STREAM` reply (a flat name/value list). */
export function parseRetention(reply: unknown): StreamRetention {
  const fields = Array.isArray(reply) ? (reply as unknown[]) : [];
  const get = (name: string): unknown => {
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
    return undefined;
  };
  const firstEntry = get('first-entry');
  const firstEntryId = Array.isArray(firstEntry) && typeof firstEntry[0] === 'string' ? firstEntry[0] : null;
  const lastGenerated = get('last-generated-id');
  const maxDeleted = get('max-deleted-entry-id');
  return {
    firstEntryId,
    lastGeneratedId: typeof lastGenerated === 'string' ? lastGenerated : '0-0',
    maxDeletedId: typeof maxDeleted === 'string' ? maxDeleted : '0-0',
  };
}

/**
 * Gaps that appear while reading: `seq` is gapless per session, so an event whose `seq` does not
 * follow the previous one means entries were trimmed under a slow reader, lost in a failed write, or
 * the stream was re-created. Malformed entries carry no usable `seq` and restart the tracking.
 */
export class SeqGapTracker {
  private lastSeq: number | null = null;
  private lastId: string | null = null;

  /** Call for each event in stream order; returns the gap to yield before it, if any. */
  next(event: StreamEvent): StreamGap | null {
    const { lastSeq, lastId } = this;
    const malformed = isMalformed(event);
    this.lastSeq = malformed ? null : event.data.seq;
    this.lastId = event.id;
    if (malformed || lastSeq === null || lastId === null || event.data.seq === lastSeq + 1) return null;
    return { kind: 'gap', after: lastId, firstAvailable: event.id, resumeFrom: lastId };
  }
}
