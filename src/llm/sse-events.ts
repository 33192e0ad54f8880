/**
 * Server-sent events read from a response body, parsed as the HTML standard's EventSource parser
 * does (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
 * for the adapters that read a stream's events themselves (the OpenAI adapter, `openai-llm.ts`).
 *
 * - Lines end with CRLF, LF or CR; a CR that ends one chunk waits for the next, which may begin with
 *   its LF. A UTF-8 sequence split between two chunks is decoded whole; invalid bytes become U+FFFD.
 *   A byte-order mark at the very start is skipped.
 * - `data:` lines append to the event's data, joined with LF; `event:` names it; one space after the
 *   colon is dropped; a line starting with `:` is a comment; `id:` and `retry:` (reconnection state,
 *   never used here: a call is not resumed) and unknown fields are ignored; a line without a colon is
 *   a field with an empty value.
 * - A blank line ends the event. It is yielded when it has a `data:` line or a name (as the OpenAI
 *   SDK's decoder does; the standard drops one without data), and dropped otherwise. An event the
 *   body ends in the middle of (no blank line after it) is dropped, as the standard and the SDK do.
 * - An event, or a line, longer than {@link MAX_SSE_EVENT_CHARS} is an `LlmBadResponseError`: a body
 *   that never ends its line would otherwise grow the process's memory for as long as bytes keep
 *   coming (the idle guard only bounds the pauses between them).
 */
import { LlmBadResponseError } from '../core/errors/index.js';


/** One event: its `event:` name (null when it had none) and its data lines joined with LF. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/** Longest event (or unfinished line) kept, in UTF-16 code units: far past any model's chunk. */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

/** Options of {@link sseEvents}. */
export interface SseEventsOptions {
  /** Longest event or line kept, in UTF-16 code units. Default {@link MAX_SSE_EVENT_CHARS}. */
  maxEventChars?: number;
  /**
   * Called for every chunk of the body as it arrives, before it is parsed: activity for a stall
   * guard, which must count bytes, not events — a comment (`: OPENROUTER PROCESSING`, a proxy's
   * keep-alive) is no event but shows the stream is alive.
   */
  onChunk?: () => void;
}

/** Yields the events of `body` as they complete; ends when the body ends, throws what it throws. */
export async function* sseEvents(body: AsyncIterable<Uint8Array>, options: SseEventsOptions = {}): AsyncGenerator<SseEvent, void, undefined> {
  const parser = new SseParser(options.maxEventChars);
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  const onChunk = options.onChunk;
  for await (const chunk of body) {
    onChunk?.();
    const events = parser.push(decoder.decode(chunk, { stream: true }));
    for (const event of events) yield event;
  }
  for (const event of parser.end(decoder.decode())) yield event;
}

/** The line and event state between two chunks. */
export class SseParser {
  /** Text after the last complete line. */
  #rest = '';
  /** The previous text ended in CR: an LF starting the next belongs to that line end. */
  #afterCr = false;
  #event: string | null = null;
  #data: string[] = [];
  /** Characters in `#data`: with `#rest`, what one event holds so far. */
  #dataChars = 0;

  constructor(private readonly maxEventChars = MAX_SSE_EVENT_CHARS) {}

  /** Parses `text` (the next decoded part of the body) and returns the events it completed. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = this.#afterCr && text.charCodeAt(0) === LF ? 1 : 0;
    if (text.length > 0) this.#afterCr = false;
    let rest = this.#rest;
    // CR alone or in CRLF is rare (the providers end lines with LF): searched for only while present.
    let cr = text.indexOf('\r', start);
    for (;;) {
      const lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        next = cr + 1;
        if (next === text.length) this.#afterCr = true;
        else if (text.charCodeAt(next) === LF) next += 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      const line = rest === '' ? text.slice(start, end) : rest + text.slice(start, end);
      rest = '';
      start = next;
      this.#line(line, events);
    }
    this.#rest = start === 0 ? rest + text : rest + text.slice(start);
    if (this.#rest.length + this.#dataChars > this.maxEventChars) {
      throw new LlmBadResponseError(`a server-sent event longer than ${this.maxEventChars} characters`, { details: { limit: this.maxEventChars } });
    }
    return events;
  }

  /**
   * The body ended. What follows the last blank line is discarded (an incomplete event is not
   * dispatched: the standard's rule, and the SDKs').
   */
  end(text = ''): SseEvent[] {
    const events = this.push(text);
    this.#rest = '';
    this.#event = null;
    this.#data = [];
    this.#dataChars = 0;
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === '') {
      this.#dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (field === 'data') {
      this.#data.push(value);
      this.#dataChars += value.length;
    }
    else if (field === 'event') this.#event = value;
  }

  #dispatch(events: SseEvent[]): void {
    if (this.#data.length > 0 || this.#event !== null) {
      events.push({ event: this.#event, data: this.#data.length === 1 ? this.#data[0]! : this.#data.join('\n') });
    }
    this.#event = null;
    this.#data = [];
    this.#dataChars = 0;
  }
}

const LF = 0x0a;
const COLON = 0x3a;
const SPACE = 0x20;
