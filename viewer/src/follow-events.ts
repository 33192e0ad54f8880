import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { authHeaders, isRecord, sessionPath } from './api';
import type { StreamEvent } from './types';

export interface FollowOptions {
  sessionId: string;
  /** Where to start: a stream id, `0` (everything) or `$` (only new). */
  after: string;
  signal: AbortSignal;
  onEvent: (event: StreamEvent) => void;
  /** The cursor was older than the stream: entries were lost, reload what the stream no longer has. */
  onGap: (resumeFrom: string) => void;
  onConnection: (state: 'open' | 'reconnecting', detail?: string) => void;
}

const RETRY_MS = [500, 1000, 2000, 4000];

/**
 * Follows a session's SSE stream with fetch, so the Bearer token goes in a header. A dropped
 * connection reconnects to the same URL with `Last-Event-ID` set to the last id seen, which the
 * gateway prefers over `?after=`; nothing is lost or doubled across the reconnect.
 */
export async function followEvents(options: FollowOptions): Promise<void> {
  const { signal } = options;
  let cursor = options.after;
  let failures = 0;
  let first = true;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = Object.assign({ accept: 'text/event-stream' }, authHeaders());
      if (!first) headers['last-event-id'] = cursor;
      const url = `${sessionPath(options.sessionId, '/events')}?after=${encodeURIComponent(first ? options.after : cursor)}`;
      const response = await fetch(url, { headers, signal, cache: 'no-store' });
      if (!response.ok || response.body === null) throw new Error(`events answered ${response.status}`);
      first = false;
      failures = 0;
      options.onConnection('open');
      const parser = createParser({
        onEvent: (message: EventSourceMessage) => {
          if (message.id !== undefined && message.id !== '') cursor = message.id;
          const event = toEvent(message);
          if (event.type === 'gap') options.onGap(typeof event.data.resumeFrom === 'string' ? event.data.resumeFrom : cursor);
          else options.onEvent(event);
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      options.onConnection('reconnecting', error instanceof Error ? error.message : String(error));
    }
    if (signal.aborted) return;
    options.onConnection('reconnecting');
    await pause(RETRY_MS[Math.min(failures, RETRY_MS.length - 1)] ?? 4000, signal);
  }
}

function toEvent(message: EventSourceMessage): StreamEvent {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    data = { raw: message.data };
  }
  return { id: message.id ?? '', type: message.event ?? 'message', data: isRecord(data) ? data : { value: data } };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
