/**
 * A fake OpenAI Chat Completions endpoint: a real `node:http` server on 127.0.0.1 that answers
 * `POST …/chat/completions` from a queue of scripted responses (see `fake-openai/script.ts`) and
 * records every request. Tests point the real SDK at it (`baseUrl: server.url`).
 *
 * Tests synchronise on its promises, never on sleeps: `waitForRequest(n)` resolves when the n-th
 * request has arrived, and each recorded request's `closed` when its connection or response ends.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FakeResponse } from './fake-openai/script.js';
import { writeError, writeStream, type ResponseContext } from './fake-openai/write-response.js';

export * from './fake-openai/script.js';

/** One request the server received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body; `{ raw: <text> }` when it was not JSON. */
  body: Record<string, unknown>;
  /**
   * Resolves when the response is done: `completed` is false when the connection closed before the
   * server finished answering (the client aborted, or the script dropped it).
   */
  closed: Promise<{ completed: boolean }>;
}

/** A scriptable fake of the OpenAI API. Call {@link start} first and {@link close} in `afterAll`. */
export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  readonly #queue: FakeResponse[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Map<NodeJS.Timeout, () => void>();
  readonly #waiters: { count: number; resolve: (request: RecordedRequest) => void }[] = [];
  #server: Server | null = null;
  #url: string | null = null;
  #closing: Promise<void> | null = null;

  /** Listens on 127.0.0.1, port 0. `url` is the API root to use as base URL (`http://127.0.0.1:<port>/v1`). */
  async start(): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    const { port } = server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}/v1`;
    return { url: this.#url, close: () => this.close() };
  }

  /** The base URL (`http://127.0.0.1:<port>/v1`); the origin alone works with any path prefix too. */
  get url(): string {
    if (this.#url === null) throw new Error('FakeOpenAiServer: not started');
    return this.#url;
  }

  /** Queues responses, answered in order, one per request. */
  enqueue(...responses: FakeResponse[]): void {
    this.#queue.push(...responses);
  }

  /** Scripted responses not yet used. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Forgets recorded requests and unused scripts (between tests sharing one server). */
  reset(): void {
    this.requests.length = 0;
    this.#queue.length = 0;
  }

  /** Resolves with the `count`-th request (1-based) once it has arrived. */
  waitForRequest(count: number): Promise<RecordedRequest> {
    const existing = this.requests[count - 1];
    if (existing !== undefined) return Promise.resolve(existing);
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** Ends every connection and stops listening; pending delays end at once. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      for (const [timer, finish] of this.#timers) {
        clearTimeout(timer);
        finish();
      }
      this.#timers.clear();
      for (const socket of this.#sockets) socket.destroy();
      if (this.#server === null) return resolve();
      this.#server.close(() => resolve());
    });
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const recorded = await this.#record(req, res);
    const ctx = this.#context(recorded);
    if (!recorded.path.split('?')[0]!.endsWith('/chat/completions') || req.method !== 'POST') {
      return writeError(res, { kind: 'error', status: 404, error: openAiError(`Unknown request URL: ${req.method ?? ''} ${recorded.path}`, null) }, ctx);
    }
    if (recorded.body.stream !== true) {
      return writeError(res, { kind: 'error', status: 400, error: openAiError('the fake server only streams: set stream=true', 'stream') }, ctx);
    }
    const script = this.#queue.shift();
    if (script === undefined) {
      return writeError(res, { kind: 'error', status: 500, error: { ...openAiError('fake server: no scripted response left', null), type: 'server_error' } }, ctx);
    }
    if (script.kind === 'hang') return;
    if (script.kind === 'error') return writeError(res, script, ctx);
    await writeStream(res, script, ctx);
  }

  async #record(req: IncomingMessage, res: ServerResponse): Promise<RecordedRequest> {
    const closed = new Promise<{ completed: boolean }>((resolve) => res.once('close', () => resolve({ completed: res.writableFinished })));
    // A write after the client went away is expected here (aborts, disconnect scripts), not a failure.
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { raw: text };
    }
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, closed };
    this.requests.push(recorded);
    for (const waiter of this.#waiters.filter((candidate) => candidate.count <= this.requests.length)) {
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(this.requests[waiter.count - 1]!);
    }
    return recorded;
  }

  #context(recorded: RecordedRequest): ResponseContext {
    const n = this.requests.length;
    const options = recorded.body.stream_options as { include_usage?: unknown } | undefined;
    return {
      requestId: `req_fake${String(n).padStart(4, '0')}`,
      completionId: `chatcmpl-fake${String(n).padStart(4, '0')}`,
      model: typeof recorded.body.model === 'string' ? recorded.body.model : 'unknown',
      includeUsage: options?.include_usage === true,
      delay: (ms) => this.#delay(ms),
    };
  }

  #delay(ms: number): Promise<void> {
    if (this.#closing !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.set(timer, resolve);
    });
  }
}

function openAiError(message: string, param: string | null): { message: string; type: string; param: string | null; code: string | null } {
  return { message, type: 'invalid_request_error', param, code: null };
}

/** Starts a fake server; shorthand for `new FakeOpenAiServer().start()` when the scripting API is also needed. */
export async function startFakeOpenAiServer(): Promise<FakeOpenAiServer> {
  const server = new FakeOpenAiServer();
  await server.start();
  return server;
}
