import type { AcceptedInput } from '../core/ports/session-store.js';
import type { EventSubscription } from '../fleet/fleet-events.js';
import type { InputEventsOptions } from './input-events.js';
import type { InputOutcome } from './input-outcome.js';
import type { ResultOptions } from './wait-for-result.js';

/**
 * What `SessionQueue.add` returns: where the input landed, and ways to follow it. The input is
 * durable in Postgres before the handle exists.
 */
export interface InputHandle {
  sessionId: string;
  /** The input's place in the session's inbox: inputs run in `seq` order. */
  seq: number;
  /** Its idempotency key: the one given, or a generated UUID. */
  inputId: string;
  /** True when `inputId` had been accepted before: `seq` is the original input's, nothing new was queued. */
  duplicate: boolean;
  /**
   * The stream id of the `input_accepted` event this add published: a cursor just past the input's
   * start. Null for a duplicate, or when the event could not be published (Redis down).
   */
  eventId: string | null;
  /**
   * True when the job that wakes a worker for the session was queued in Redis. False when the input
   * is stored in Postgres but the wake-up failed or did not finish within `redisTimeoutMs` (Redis
   * down or slow): the input is safe, and the workers' sweeper runs it once Redis answers again.
   */
  wakeQueued: boolean;
  /** The input's terminal outcome: see `SessionQueue.result`. */
  result(options?: ResultOptions): Promise<InputOutcome>;
  /**
   * The input's events (`data.inputSeq === seq`) from its `input_accepted` on, ending after its
   * `input_finished`. `gap` items mean events were lost: rebuild from `result()` and `history()`.
   */
  events(options?: InputEventsOptions): EventSubscription;
}

/** The queue operations a handle delegates to. */
export interface HandleBackend {
  result(sessionId: string, seq: number, options?: ResultOptions): Promise<InputOutcome>;
  inputEvents(sessionId: string, seq: number, acceptedEventId: string | null, options?: InputEventsOptions): EventSubscription;
}

/** What the add learnt after the commit: the stream id of its `input_accepted` (when it published one), and whether the wake-up was queued. */
export interface AfterCommit {
  acceptedEventId: string | null;
  wakeQueued: boolean;
}

/** Builds the handle of an accepted input. */
export function createInputHandle(backend: HandleBackend, accepted: AcceptedInput, after: AfterCommit): InputHandle {
  const { sessionId, seq, inputId, duplicate } = accepted;
  const { acceptedEventId, wakeQueued } = after;
  return {
    sessionId,
    seq,
    inputId,
    duplicate,
    eventId: acceptedEventId,
    wakeQueued,
    result: (options) => backend.result(sessionId, seq, options),
    events: (options) => backend.inputEvents(sessionId, seq, acceptedEventId, options),
  };
}
