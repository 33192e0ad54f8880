import type { Redis } from 'ioredis';
import { whileLinked } from '../core/linked-signal.js';
import type { SessionStore } from '../core/ports/session-store.js';
import { readRange, readSessionEvents } from '../events/event-subscriber.js';
import type { StreamEvent, StreamGap, StreamItem } from '../events/fleet-events.js';
import { FROM_START } from '../events/stream-id.js';
import { readSettledOutcome } from './read-outcome.js';
import { previousStreamId } from './stream-cursor.js';

/** Options of `handle.events()`. */
export interface InputEventsOptions {
  /** Ends the iteration promptly, even during a blocked read. */
  signal?: AbortSignal;
}

/** What following one input's events needs from the queue. */
export interface InputEventsDeps {
  store: SessionStore;
  redis: Redis;
  queueName: string;
  /** Aborts when the queue closes. */
  closed: AbortSignal;
}

/** The input whose events are followed, and where its first event is when known. */
export interface InputEventsTarget {
  sessionId: string;
  seq: number;
  /** Stream id of its `input_accepted`; null when this add did not publish one (a duplicate, or Redis was down). */
  acceptedEventId: string | null;
}

const CATCH_UP_PAGE = 200;

/**
 * The events of one input (`data.inputSeq === seq`), from its `input_accepted` on, ending after its
 * `input_finished`. Reading starts right before its own `input_accepted` entry, so the rest of the
 * session's stream is not re-read. A `gap` is yielded when events were lost; if the input has then
 * already settled in Postgres, what the stream still holds is read without blocking and the
 * iteration ends — call `result()` for the outcome. An input steered into another one yields only
 * its `input_accepted` and `input_finished`: its run's events carry the host's `inputSeq`.
 */
export function inputEvents(deps: InputEventsDeps, target: InputEventsTarget, options: InputEventsOptions = {}): AsyncGenerator<StreamItem, void, undefined> {
  // Linked, not AbortSignal.any: the queue's close signal lives as long as the queue (linked-signal.ts).
  return whileLinked(deps.closed, options.signal, (signal) => followInput(deps, target, signal));
}

async function* followInput(deps: InputEventsDeps, target: InputEventsTarget, signal: AbortSignal): AsyncGenerator<StreamItem, void, undefined> {
  const { sessionId, seq, acceptedEventId } = target;
  if (acceptedEventId === null && (await isSettled(deps, target))) {
    yield* catchUp(deps, target, FROM_START, signal);
    return;
  }
  const after = acceptedEventId === null ? FROM_START : previousStreamId(acceptedEventId);
  for await (const item of readSessionEvents(deps.redis, { queueName: deps.queueName, sessionId, after, signal })) {
    if (item.kind === 'gap') {
      if (startsAtOwnEntry(item, after, acceptedEventId)) continue;
      yield item;
      if (await isSettled(deps, target)) {
        yield* catchUp(deps, target, item.resumeFrom, signal);
        return;
      }
      continue;
    }
    if (item.data.inputSeq !== seq) continue;
    yield item;
    if (item.type === 'input_finished') return;
  }
}

/**
 * The gap check reports a cursor older than the first retained entry even when that entry is the
 * very one the cursor was placed before (a session whose first event is this input's): nothing was
 * missed then.
 */
function startsAtOwnEntry(gap: StreamGap, after: string, acceptedEventId: string | null): boolean {
  return acceptedEventId !== null && gap.after === after && gap.firstAvailable === acceptedEventId;
}

async function isSettled(deps: InputEventsDeps, target: InputEventsTarget): Promise<boolean> {
  return (await readSettledOutcome(deps.store, target.sessionId, target.seq)) !== null;
}

/** Reads what the stream holds after `cursor` without blocking, yielding this input's events. */
async function* catchUp(deps: InputEventsDeps, target: InputEventsTarget, cursor: string, signal: AbortSignal): AsyncGenerator<StreamEvent, void, undefined> {
  let after = cursor;
  while (!signal.aborted) {
    const page = await readRange(deps.redis, deps.queueName, target.sessionId, { after, count: CATCH_UP_PAGE });
    for (const event of page) {
      after = event.id;
      if (event.data.inputSeq !== target.seq) continue;
      yield event;
      if (event.type === 'input_finished') return;
    }
    if (page.length < CATCH_UP_PAGE) return;
  }
}
