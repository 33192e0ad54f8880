import type { FleetEvent } from '../fleet/fleet-events.js';

/** An event waiting to be written, with the input it belongs to. */
export interface PendingEvent {
  inputSeq: number | null;
  event: FleetEvent;
  /** The lease token the event is written under (a worker's), if any: see `SessionBatch.fence`. */
  fence?: number | undefined;
}

/** An event released by the coalescer: `parts` is how many emitted events it stands for (1 if none merged). */
export interface ReleasedEvent extends PendingEvent {
  parts: number;
}

type DeltaEvent = Extract<FleetEvent, { type: 'stream_delta' | 'stream_think_delta' }>;

interface OpenDelta {
  inputSeq: number | null;
  fence: number | undefined;
  first: DeltaEvent;
  text: string;
  parts: number;
  /** When the window that began with `first` closes (same clock as the `nowMs` arguments). */
  deadline: number;
}

/**
 * Merges streamed text deltas so one chatty session cannot flood Redis.
 *
 * Consecutive `stream_delta` events of the same stream (and, separately, consecutive
 * `stream_think_delta` events) become one event whose `text` is their concatenation, for at most
 * `windowMs` after the first of them or until the text reaches `maxChars`. Any other event releases
 * the open delta before itself, so the order subscribers see is the order the loop emitted.
 *
 * Pure: time comes in as arguments, and the caller owns the timer that calls {@link release} when
 * {@link deadline} passes.
 */
export class DeltaCoalescer {
  private open: OpenDelta | null = null;

  /**
   * @param windowMs how long a delta may wait for followers, in milliseconds; 0 disables merging.
   * @param maxChars the longest merged text, in UTF-16 code units; a single longer delta passes as is.
   */
  constructor(
    private readonly windowMs: number,
    private readonly maxChars: number,
  ) {}

  /** When the open delta must be released, or null when none is open. */
  get deadline(): number | null {
    return this.open?.deadline ?? null;
  }

  /** Takes one emitted event; returns the events that are ready to be written now, in order. */
  offer(item: PendingEvent, nowMs: number): ReleasedEvent[] {
    const { event } = item;
    // Most events are not deltas and find no delta open: they pass straight through.
    if (this.open === null && !isDelta(event)) return [{ inputSeq: item.inputSeq, event, fence: item.fence, parts: 1 }];
    const ready = this.open !== null && nowMs >= this.open.deadline ? this.release() : [];
    if (!isDelta(event)) return [...ready, ...this.release(), { inputSeq: item.inputSeq, event, fence: item.fence, parts: 1 }];
    const open = this.open;
    if (open !== null && continues(open, item, event) && open.text.length + event.text.length <= this.maxChars) {
      open.text += event.text;
      open.parts += 1;
      return open.text.length >= this.maxChars ? [...ready, ...this.release()] : ready;
    }
    ready.push(...this.release());
    if (this.windowMs <= 0 || event.text.length >= this.maxChars) return [...ready, { inputSeq: item.inputSeq, event, fence: item.fence, parts: 1 }];
    this.open = { inputSeq: item.inputSeq, fence: item.fence, first: event, text: event.text, parts: 1, deadline: nowMs + this.windowMs };
    return ready;
  }

  /** Releases the open delta, if any (its window ended, or the caller is flushing). */
  release(): ReleasedEvent[] {
    const open = this.open;
    if (open === null) return [];
    this.open = null;
    // Object.assign, not a spread followed by `text`, which Node 20's V8 runs on a slow path.
    const event: DeltaEvent = open.parts === 1 ? open.first : Object.assign({}, open.first, { text: open.text });
    return [{ inputSeq: open.inputSeq, event, fence: open.fence, parts: open.parts }];
  }
}

/** A delta without string text (a caller bug) is passed through unmerged rather than crashing the merge. */
function isDelta(event: FleetEvent): event is DeltaEvent {
  return (event.type === 'stream_delta' || event.type === 'stream_think_delta') && typeof event.text === 'string';
}

/** The same stream of the same input, written under the same lease (a delta is never moved into another holder's write). */
function continues(open: OpenDelta, item: PendingEvent, event: DeltaEvent): boolean {
  return open.first.type === event.type && open.first.streamId === event.streamId && open.inputSeq === item.inputSeq && open.fence === item.fence;
}
