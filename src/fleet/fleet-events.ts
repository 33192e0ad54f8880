import type { LoopEvent } from '../core/events/loop-events.js';
import type { AgentRef, InputKind, InputMode, InputResult } from '../core/session-types.js';

/**
 * Lifecycle events the fleet adds around the loop's own events. Together with
 * `LoopEvent` they are everything that appears on a session's Redis stream.
 */
export type LifecycleEvent =
  | { type: 'input_accepted'; kind: InputKind; mode: InputMode; inputId: string }
  /** `agent`: the agent that runs it and its version (docs/agents.md). */
  | { type: 'input_started'; attempt: number; agent: AgentRef }
  /**
   * The input goes on: a takeover continues what a lost worker was running (`worker_lost`: drop the
   * lost attempt's partial deltas), or the child sessions it waited for have answered, or it was
   * cancelled while it waited (`children_answered`).
   */
  | { type: 'input_resumed'; reason: 'worker_lost' | 'children_answered'; attempt: number; agent: AgentRef }
  | ({ type: 'input_finished'; error: { code: string; message: string } | null; steeredInto?: number } & InputResult)
  /**
   * A durable timer fired: `delivered` as the input `inputSeq` (kind `timer`);
   * `error` when the inbox refused the firing (the timer is then cancelled) or the `timer.fire` hook
   * threw (the timer stays armed, the alarm is retried); as the hook decided, `skipped` (nothing
   * delivered; a recurring timer is re-armed), `cancelled`, or `postponed` to `dueAt` (ISO 8601).
   * `inputSeq` is null but for `delivered`.
   */
  | { type: 'timer_fired'; timerId: string; fireCount: number; outcome: 'delivered' | 'skipped' | 'cancelled' }
  | { type: 'timer_fired'; timerId: string; fireCount: number; outcome: 'postponed'; dueAt: string }
  | { type: 'timer_fired'; timerId: string; fireCount: number; outcome: 'error'; error: { code: string; message: string } };

export type FleetEvent = LoopEvent | LifecycleEvent;

export type FleetEventType = FleetEvent['type'];

/** What every entry's `data` field carries besides the event's own payload. */
export interface EventEnvelopeFields {
  sessionId: string;
  /** The input the event belongs to; null for session-level events. */
  inputSeq: number | null;
  /** Per-session event number, assigned by Redis at publish time: 1, 2, 3 … */
  seq: number;
}

/** One entry as a subscriber sees it. `id` is the Redis stream id: a cursor to resume after. */
export interface StreamEvent {
  kind: 'event';
  id: string;
  type: string;
  data: EventEnvelopeFields & Record<string, unknown>;
}

/**
 * The subscriber's cursor is older than what the stream still holds (trimmed by MAXLEN, expired, or
 * lost with Redis): events were missed. Rebuild from Postgres (history, input results), then go on
 * from `resumeFrom`.
 */
export interface StreamGap {
  kind: 'gap';
  /** The cursor the subscriber asked to read after. */
  after: string;
  /** The oldest id the stream still holds, or null when the stream is gone. */
  firstAvailable: string | null;
  /** Where reading continues. */
  resumeFrom: string;
}

export type StreamItem = StreamEvent | StreamGap;

/**
 * A subscription to a session's events (`subscribe`, `handle.events()`): iterate it with `for await`;
 * `break`, `return()`, its `signal` or leaving an `await using` scope ends it and lets go of what it
 * held, at once also while it waits for news.
 */
export type EventSubscription = AsyncIterable<StreamItem> & AsyncDisposable;
