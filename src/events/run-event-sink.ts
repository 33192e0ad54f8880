import { StateConflictError, toLoopfleetError } from '../core/errors/index.js';
import type { EventSink } from '../core/ports/event-sink.js';
import type { FleetEvent } from '../fleet/fleet-events.js';

/**
 * The event sink of one run (one input of one session), handed to the agent loop. `emit` is
 * synchronous, never blocks and never throws: events are queued in order, coalesced and written
 * behind the loop's back. Redis failures go to the publisher's `onError` and the `dropped` counter;
 * the stream is then incomplete, and subscribers rebuild from Postgres.
 */
export interface RunEventSink extends EventSink {
  /** Queues a loop or lifecycle event. Never throws. */
  emit(event: FleetEvent): void;
  /** Resolves once every event emitted so far is written to Redis (or counted as dropped). */
  flush(): Promise<void>;
  /**
   * Refuses further events (they are dropped and reported, stage `closed`) and resolves once those
   * emitted before are written. Idempotent. Does not close the publisher.
   */
  close(): Promise<void>;
}

/** What a sink needs from its publisher. */
export interface SinkHost {
  /** Queues one event of a session; never throws. */
  enqueue(sessionId: string, inputSeq: number | null, event: FleetEvent, fence: number | undefined): void;
  flushSession(sessionId: string): Promise<void>;
  /** Counts and reports an event refused because its sink was closed (`closed`) or that could not be queued (`encode`). */
  drop(sessionId: string, event: FleetEvent, stage: 'closed' | 'encode', error: Error): void;
}

/** {@link RunEventSink} bound to a session and input, writing through a {@link SinkHost}. */
export class PublisherRunSink implements RunEventSink {
  private closing: Promise<void> | null = null;

  constructor(
    private readonly host: SinkHost,
    readonly sessionId: string,
    readonly inputSeq: number | null,
    /** The lease token the run writes under (`RedisEventPublisher.publish`). */
    readonly fence?: number,
  ) {}

  emit(event: FleetEvent): void {
    try {
      if (this.closing !== null) {
        this.host.drop(this.sessionId, event, 'closed', new StateConflictError(`event sink of session ${this.sessionId} is closed`));
        return;
      }
      if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
        throw new TypeError(`not an event: ${String(event)}`);
      }
      this.host.enqueue(this.sessionId, this.inputSeq, event, this.fence);
    } catch (error) {
      // A malformed event must not fail the run: report it instead.
      this.host.drop(this.sessionId, event, 'encode', toLoopfleetError(error));
    }
  }

  flush(): Promise<void> {
    return this.host.flushSession(this.sessionId);
  }

  close(): Promise<void> {
    this.closing ??= this.host.flushSession(this.sessionId);
    return this.closing;
  }
}
