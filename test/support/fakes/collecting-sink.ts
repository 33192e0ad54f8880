import type { LoopEvent, LoopEventType } from '../../../src/core/events/loop-events.js';
import type { EventSink } from '../../../src/core/ports/event-sink.js';

/** An `EventSink` that keeps every event, for assertions. */
export class CollectingSink implements EventSink {
  readonly events: LoopEvent[] = [];

  emit(event: LoopEvent): void {
    this.events.push(event);
  }

  types(): LoopEventType[] {
    return this.events.map((event) => event.type);
  }

  ofType<T extends LoopEventType>(type: T): Extract<LoopEvent, { type: T }>[] {
    return this.events.filter((event): event is Extract<LoopEvent, { type: T }> => event.type === type);
  }
}
