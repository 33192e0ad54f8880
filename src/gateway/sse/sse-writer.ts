import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** One server-sent event. `data` is written as is, one `data:` line per line of it. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** Formats one event as its wire text, ending with the blank line that dispatches it. */
export function formatSse(message: SseMessage): string {
  let text = '';
  if (message.id !== undefined) text += `id: ${oneLine(message.id)}\n`;
  if (message.event !== undefined) text += `event: ${oneLine(message.event)}\n`;
  for (const line of message.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** An id or event name never spans lines: a newline in it would start another field. */
function oneLine(value: string): string {
  return value.replace(/[\r\n]/g, ' ');
}

/** Options of {@link SseWriter}. */
export interface SseWriterOptions {
  /** Interval of the `: hb` comment that keeps proxies from closing an idle stream, in ms; 0 for none. */
  heartbeatMs: number;
  /** Headers to send with the response besides the SSE ones (CORS headers Fastify already set). */
  headers?: OutgoingHttpHeaders;
}

/**
 * Writes an SSE response on a raw Node response: headers at `open()`, events with backpressure
 * (a send waits for `drain`), a heartbeat comment, and `signal`, aborted the moment the client goes
 * (or `close()` is called), which ends whatever the route reads for it.
 */
export class SseWriter {
  readonly #raw: ServerResponse;
  readonly #options: SseWriterOptions;
  readonly #closed = new AbortController();
  #heartbeat: NodeJS.Timeout | null = null;

  constructor(raw: ServerResponse, options: SseWriterOptions) {
    this.#raw = raw;
    this.#options = options;
    raw.once('close', () => this.#end());
  }

  /** Aborted when the client disconnects or the stream is closed. */
  get signal(): AbortSignal {
    return this.#closed.signal;
  }

  /** Sends the status and headers at once, so the client sees the stream open before the first event. */
  open(extraHeaders: OutgoingHttpHeaders = {}): void {
    const headers = Object.assign({}, this.#options.headers, extraHeaders, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.#raw.writeHead(200, headers);
    this.#raw.flushHeaders();
    if (this.#options.heartbeatMs > 0) {
      this.#heartbeat = setInterval(() => this.#write(': hb\n\n'), this.#options.heartbeatMs);
      this.#heartbeat.unref();
    }
  }

  /** Writes one event; resolves once the socket took it (or the client is gone). */
  async send(message: SseMessage): Promise<void> {
    await this.writeText(formatSse(message));
  }

  /** Writes preformatted SSE text (a `data: [DONE]` line, a comment). */
  async writeText(text: string): Promise<void> {
    if (this.#write(text)) return;
    if (this.signal.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.#raw.off('drain', done);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      this.#raw.once('drain', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Ends the response (idempotent). */
  close(): void {
    if (!this.#raw.writableEnded) this.#raw.end();
    this.#end();
  }

  /** False when the socket's buffer is full: wait for `drain`. */
  #write(text: string): boolean {
    if (this.signal.aborted || this.#raw.writableEnded) return true;
    return this.#raw.write(text);
  }

  #end(): void {
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    if (!this.#closed.signal.aborted) this.#closed.abort();
  }
}
