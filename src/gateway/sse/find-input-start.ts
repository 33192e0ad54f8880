import type { RedisConnection } from '../../fleet/redis-connection.js';
import { isLoopfleetError, InfrastructureError } from '../../core/errors/index.js';
import { eventStreamKey, type QueueKeys } from '../../fleet/fleet-keys.js';
import { parseStreamEntry, type RawStreamEntry } from '../../events/stream-entry.js';

/** Entries read per `XREVRANGE` while looking for an input's start. */
const PAGE = 200;

/**
 * The cursor to read input `seq`'s events from its start: the id of the stream entry just before
 * the input's `input_accepted` (or, when the stream was trimmed past it, before the input's earliest
 * retained entry), or `'0'` when that entry is the oldest the stream holds or the input has none.
 * Reads back from the newest entry with `XREVRANGE` in pages: a running input costs a page or two; an
 * input trimmed away reads the whole retained stream (bounded by `LOOPFLEET_EVENTS_MAXLEN`).
 */
export async function findInputStart(redis: RedisConnection, queueName: QueueKeys, sessionId: string, seq: number): Promise<string> {
  const streamKey = eventStreamKey(queueName, sessionId);
  let end = '+';
  let earliest: string | null = null;
  try {
    for (;;) {
      const page = (await redis.xrevrange(streamKey, end, '-', 'COUNT', PAGE)) as RawStreamEntry[];
      for (let i = 0; i < page.length; i += 1) {
        const event = parseStreamEntry(sessionId, page[i]!);
        if (event.data.inputSeq !== seq) continue;
        earliest = event.id;
        if (event.type === 'input_accepted') return page[i + 1]?.[0] ?? (await entryBefore(redis, streamKey, event.id));
      }
      if (page.length < PAGE) return earliest === null ? '0' : await entryBefore(redis, streamKey, earliest);
      end = `(${page[page.length - 1]![0]}`;
    }
  } catch (error) {
    if (isLoopfleetError(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new InfrastructureError(`reading event stream ${streamKey} failed: ${message}`, { cause: error, details: { streamKey } });
  }
}

async function entryBefore(redis: RedisConnection, streamKey: string, id: string): Promise<string> {
  const before = (await redis.xrevrange(streamKey, `(${id}`, '-', 'COUNT', 1)) as RawStreamEntry[];
  return before[0]?.[0] ?? '0';
}
