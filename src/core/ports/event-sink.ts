import type { LoopEvent } from '../events/loop-events.js';

/**
 * Where the loop's events go (the Redis stream publisher in the fleet, a collecting array in tests).
 * `emit` must not block the loop; a sink that throws is contained by `safeEmit` and never fails a run.
 */
export interface EventSink {
  emit(event: LoopEvent): void;
}

/** Emits without letting a listener bug fail the run; the error goes to `onError` (logged by the shell). */
export function safeEmit(sink: EventSink, event: LoopEvent, onError?: (error: unknown, event: LoopEvent) => void): void {
  try {
    sink.emit(event);
  } catch (error) {
    try {
      onError?.(error, event);
    } catch {
      // A broken error reporter must not fail the run either.
    }
  }
}

/** A sink that drops everything. */
export const nullSink: EventSink = { emit: () => {} };
