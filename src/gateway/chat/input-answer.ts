import type { RedisConnection } from '../../fleet/redis-connection.js';
import type { QueueKeys } from '../../fleet/fleet-keys.js';
import { readRange } from '../../events/event-subscriber.js';
import type { StreamEvent, StreamItem } from '../../fleet/fleet-events.js';
import { dropDiscarded } from './drop-discarded.js';
import { assistantMessageId, UiMessageChunkMapper, type UiMessageChunk } from './ui-message-chunks.js';

/** Entries per `XRANGE` page while replaying an answer. */
const PAGE = 500;

/** An input's events read so far, and the cursor to follow the stream after them. */
export interface AnswerBacklog {
  /** The input's events, with what is known void left out (`dropDiscarded`). */
  events: StreamEvent[];
  /** The last stream id read (of any input), or the start cursor when nothing was read. */
  lastId: string;
}

/** Reads what the stream holds after `after` for input `seq`, page by page, up to its newest entry. */
export async function readAnswerBacklog(redis: RedisConnection, queue: QueueKeys, sessionId: string, seq: number, after: string): Promise<AnswerBacklog> {
  const events: StreamEvent[] = [];
  let lastId = after;
  for (;;) {
    const page = await readRange(redis, queue, sessionId, { after: lastId, count: PAGE });
    for (const event of page) if (event.data.inputSeq === seq) events.push(event);
    if (page.length > 0) lastId = page[page.length - 1]!.id;
    if (page.length < PAGE || events.some((event) => event.type === 'input_finished')) break;
  }
  return { events: dropDiscarded(events), lastId };
}

/**
 * Writes input `seq`'s answer as UI message chunks: `start` at once, the backlog, then the live
 * events of that input until its `input_finished`. Gaps in the live stream are skipped: the text
 * may then miss a piece, which `/v1/chat/:id/messages` has whole once the input is over.
 */
export async function writeInputAnswer(
  sessionId: string,
  seq: number,
  backlog: readonly StreamEvent[],
  live: () => AsyncIterable<StreamItem>,
  write: (chunk: UiMessageChunk) => Promise<void>,
): Promise<void> {
  const mapper = new UiMessageChunkMapper(assistantMessageId(sessionId, seq));
  for (const chunk of mapper.start()) await write(chunk);
  for (const event of backlog) for (const chunk of mapper.push(event)) await write(chunk);
  if (mapper.finished) return;
  for await (const item of live()) {
    if (item.kind !== 'event' || item.data.inputSeq !== seq) continue;
    for (const chunk of mapper.push(item)) await write(chunk);
    if (mapper.finished) return;
  }
}
