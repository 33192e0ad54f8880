import type { LoopEvent } from '../events/loop-events.js';
import { safeEmit } from '../ports/event-sink.js';
import type { RunContext } from './run-context.js';

/** Publishes a run event; a failing sink never fails the run (observers are reported to, never obeyed). */
export function emit(ctx: RunContext, event: LoopEvent): void {
  safeEmit(ctx.deps.sink, event, ctx.deps.onObserverError);
}
