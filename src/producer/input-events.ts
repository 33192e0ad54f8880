import type { RedisConnection } from '../fleet/redis-connection.js';
import { isLoopfleetError } from '../core/errors/index.js';
import { linkedSignal, whileLinked, type LinkedIteration } from '../core/linked-signal.js';
import type { ClientStore } from '../core/ports/client-store.js';
import { followSessionEvents, readRange, type OpenTail } from '../events/event-subscriber.js';
import type { StreamEvent, StreamGap, StreamItem } from '../fleet/fleet-events.js';
import type { QueueKeys } from '../fleet/fleet-keys.js';
import { FROM_START } from '../events/stream-id.js';
import { abortableDelay } from './abortable-delay.js';
import { readSettledOutcome } from './read-outcome.js';
import { SESSION_QUEUE_DEFAULTS } from './session-queue-options.js';
import { previousStreamId } from './stream-cursor.js';

/** Options of `handle.events()`. */
export interface InputEventsOptions {
  /** Ends the iteration promptly, even during a blocked read. */
  signal?: AbortSignal;
}

/** What following one input's events needs from the queue. */
export interface InputEventsDeps {
  store: ClientStore;
  redis: RedisConnection;
  queueName: QueueKeys;
  /** How the stream is followed past the start (the queue's shared tails); default a blocked connection of its own. */
  openTail?: OpenTail;
  /** Aborts when the queue closes. */
  closed: AbortSignal;
  /**
   * How often Postgres is re-read while following, in milliseconds: the stream may have lost the
   * input's `input_finished` for good. Default {@link SESSION_QUEUE_DEFAULTS}.recheckMs.
   */
  recheckMs?: number;
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
 * session's stream is not re-read. A `gap` is yielded when events were lost. The `input_finished`
 * may never come (a Redis failover to a replica that missed it), so Postgres is also re-read every
 * `recheckMs`: once the input has settled there and its `input_finished` has not followed within
 * another `recheckMs` — or at a gap, if it has already settled — what the stream still holds is read
 * without blocking and the iteration ends: call `result()` for the outcome. Throws
 * `session.not_found` when the session is deleted meanwhile. An input steered into another one
 * yields only its `input_accepted` and `input_finished`: its run's events carry the host's `inputSeq`.
 * A handle without its `input_accepted` id reads from the stream's start, and yields a gap first when
 * the input's first retained event is not its `input_accepted` (see {@link flagLostStart}).
 */
export function inputEvents(deps: InputEventsDeps, target: InputEventsTarget, options: InputEventsOptions = {}): LinkedIteration<StreamItem> {
  // Linked, not AbortSignal.any: the queue's close signal lives as long as the queue (linked-signal.ts).
  return whileLinked([deps.closed, options.signal], (signal) =>
    target.acceptedEventId === null ? flagLostStart(deps, target, followInput(deps, target, signal)) : followInput(deps, target, signal),
  );
}

/**
 * Read from the stream's start (a handle with no `input_accepted` of its own: a duplicate add, or an
 * add whose publish failed), a stream trimmed past the input's start shows no gap: nothing says where
 * the input's events began. Its first event does: every input's events begin with its
 * `input_accepted`, so a first one of another type means the earlier ones were lost — a gap comes
 * before it. (No event of the input at all is not flagged: the iteration ends, and `result()` has the
 * outcome, as when only the `input_finished` is lost.)
 */
async function* flagLostStart(deps: InputEventsDeps, target: InputEventsTarget, items: AsyncGenerator<StreamItem, void, undefined>): AsyncGenerator<StreamItem, void, undefined> {
  let first = true;
  for await (const item of items) {
    if (first && item.kind === 'event' && item.type !== 'input_accepted') {
      const [oldest] = await readRange(deps.redis, deps.queueName, target.sessionId, { after: FROM_START, count: 1 });
      yield { kind: 'gap', after: FROM_START, firstAvailable: oldest?.id ?? item.id, resumeFrom: previousStreamId(item.id) };
    }
    first = false;
    yield item;
  }
}

async function* followInput(deps: InputEventsDeps, target: InputEventsTarget, signal: AbortSignal): AsyncGenerator<StreamItem, void, undefined> {
  const { sessionId, seq, acceptedEventId } = target;
  if (acceptedEventId === null && (await isSettled(deps, target))) {
    yield* catchUp(deps, target, FROM_START, signal);
    return;
  }
  const after = acceptedEventId === null ? FROM_START : previousStreamId(acceptedEventId);
  // Ends the blocking read, not the iteration: once Postgres has the input settled (or the iteration ends).
  const stopReading = new AbortController();
  const reading = linkedSignal([signal, stopReading.signal]);
  const recheck = recheckStore(deps, target, reading.signal, stopReading);
  // The last entry seen: where the non-blocking read resumes once the input has settled.
  let cursor = after;
  try {
    for await (const item of followSessionEvents(deps.redis, { queueName: deps.queueName, sessionId, after, signal: reading.signal }, null, deps.openTail)) {
      if (item.kind === 'gap') {
        cursor = item.resumeFrom;
        if (startsAtOwnEntry(item, after, acceptedEventId)) continue;
        yield item;
        if (await isSettled(deps, target)) {
          yield* catchUp(deps, target, item.resumeFrom, signal);
          return;
        }
        continue;
      }
      cursor = item.id;
      if (item.data.inputSeq !== seq) continue;
      yield item;
      if (item.type === 'input_finished') return;
    }
    // The read ended: the input settled, it can never settle, or the iteration was stopped.
    stopReading.abort();
    const outcome = await recheck;
    if (outcome.failure !== undefined) throw outcome.failure;
    if (outcome.settled && !signal.aborted) yield* catchUp(deps, target, cursor, signal);
  } finally {
    stopReading.abort();
    reading.dispose();
    // No Postgres read outlives the iteration.
    await recheck;
  }
}

/** How the re-reading of Postgres ended: the input settled, or it can never settle (no such session or input). */
interface RecheckOutcome {
  settled: boolean;
  failure?: unknown;
}

/**
 * Re-reads the input from Postgres every `recheckMs` until it has settled, then gives its
 * `input_finished` one more `recheckMs` to arrive — the worker commits the outcome before it
 * publishes the event, so a healthy stream is not cut short in between — and stops the blocking
 * read. Also stops it, with the error, when waiting can never end (`session.not_found`,
 * `input.invalid`). An outage is shrugged off: the stream is still followed, and the next re-read
 * tries again. Ends when `signal` aborts (the iteration ended).
 */
async function recheckStore(deps: InputEventsDeps, target: InputEventsTarget, signal: AbortSignal, stopReading: AbortController): Promise<RecheckOutcome> {
  const everyMs = deps.recheckMs ?? SESSION_QUEUE_DEFAULTS.recheckMs;
  while (!signal.aborted) {
    await abortableDelay(everyMs, signal);
    if (signal.aborted) break;
    try {
      if (await isSettled(deps, target)) {
        await abortableDelay(everyMs, signal);
        if (signal.aborted) break;
        stopReading.abort();
        return { settled: true };
      }
    } catch (error) {
      if (isLoopfleetError(error) && error.fault === 'input') {
        stopReading.abort();
        return { settled: false, failure: error };
      }
    }
  }
  return { settled: false };
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
