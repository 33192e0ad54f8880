/**
 * A protocol-faithful fake of Anthropic's Messages API on loopback (docs/llm-providers.md): a real
 * `node:http` server on 127.0.0.1, answering `POST …/v1/messages` with `stream: true` as Anthropic
 * does — SSE frames (`text/event-stream`, `request-id` header), error bodies of Anthropic's shape
 * and statuses — and misbehaving on request (slow first event, dropped connection, malformed data,
 * in-stream error event, hang). Each request consumes the next scripted step and is recorded with
 * its headers and body. `close()` ends every socket, so a test file that closes it leaks nothing.
 * A streamed reply's input usage comes from the server's prompt cache (`fake-anthropic/prompt-cache.ts`:
 * the `cache_control` breakpoints it has seen), unless the step scripts it.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FakePromptCache, type PromptUsage } from './fake-anthropic/prompt-cache.js';
import { errorFrame, malformedFrame, serializeFrame, streamFrames } from './fake-anthropic/sse-frames.js';
import { defaultErrorType, type ErrorStep, type FakeStep, type StreamFault, type StreamStep } from './fake-anthropic/steps.js';

export * from './fake-anthropic/steps.js';
export { LOOKBACK_BLOCKS, type PromptUsage } from './fake-anthropic/prompt-cache.js';

/** One request the server received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  path: string;
  /** Lower-cased header names, as Node gives them (`x-api-key`, `anthropic-version` …). */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or null when it was not JSON. */
  body: Record<string, unknown> | null;
  /**
   * Resolves when the response's connection closes; `early` is true when it closed before the
   * response was complete (the client went away, or a scripted fault cut it).
   */
  closed: Promise<{ early: boolean }>;
}

/** A script step, or a function choosing one from the request. */
export type ScriptEntry = FakeStep | ((request: RecordedRequest) => FakeStep);

/** A running fake server. */
export interface FakeAnthropicServer {
  /** The base URL to give the SDK, e.g. `http://127.0.0.1:41234` (no `/v1`). */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** Steps not used yet. */
  readonly pending: number;
  /** The input usage each streamed reply reported from the prompt cache, in request order. */
  readonly promptUsage: readonly PromptUsage[];
  /** Appends steps to the script. */
  push(...steps: ScriptEntry[]): void;
  /** Destroys every connection, cancels pending timers and stops listening. Idempotent. */
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 and an ephemeral port. An exhausted script answers 500 `api_error`. */
export async function startFakeAnthropicServer(script: ScriptEntry[] = []): Promise<FakeAnthropicServer> {
  const steps = [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const cache = new FakePromptCache();
  const promptUsage: PromptUsage[] = [];
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    void readBody(req).then((raw) => {
      const recorded = record(req, res, raw);
      requests.push(recorded);
      if (!/\/v1\/messages(\?|$)/.test(recorded.path) || req.method !== 'POST') {
        return sendError(res, { kind: 'error', status: 404, message: `not found: ${recorded.method} ${recorded.path}` }, requests.length);
      }
      const entry = steps.shift();
      const step = typeof entry === 'function' ? entry(recorded) : entry;
      if (step === undefined) return sendError(res, { kind: 'error', status: 500, message: 'fake server: script exhausted' }, requests.length);
      const takePrompt = (): PromptUsage => {
        const prompt = cache.take(recorded.body);
        promptUsage.push(prompt);
        return prompt;
      };
      respond(res, step, recorded, requests.length, takePrompt, (ms) => delay(ms, timers));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    promptUsage,
    get pending() {
      return steps.length;
    },
    push: (...more) => void steps.push(...more),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function record(req: IncomingMessage, res: ServerResponse, raw: string): RecordedRequest {
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const closed = new Promise<{ early: boolean }>((resolve) => res.on('close', () => resolve({ early: !res.writableFinished })));
  return { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, closed };
}

function respond(res: ServerResponse, step: FakeStep, request: RecordedRequest, seq: number, takePrompt: () => PromptUsage, wait: (ms: number) => Promise<void>): void {
  switch (step.kind) {
    case 'error':
      return sendError(res, step, seq);
    case 'hang':
      return;
    case 'drop':
      res.socket?.destroy();
      return;
    case 'stream':
      void sendStream(res, step, request, seq, takePrompt(), wait);
  }
}

function sendError(res: ServerResponse, step: ErrorStep, seq: number): void {
  const requestId = `req_fake_${seq}`;
  const errorType = step.errorType ?? defaultErrorType(step.status);
  const body = JSON.stringify({ type: 'error', error: { type: errorType, message: step.message ?? `${errorType} (fake)` }, request_id: requestId });
  const retryable = [408, 409, 429].includes(step.status) || step.status >= 500;
  res.writeHead(step.status, {
    'content-type': 'application/json',
    'request-id': requestId,
    'x-should-retry': String(retryable),
    ...step.headers,
  });
  if (step.stallBody === true) res.write(body.slice(0, body.length >> 1));
  else res.end(body);
}

async function sendStream(res: ServerResponse, step: StreamStep, request: RecordedRequest, seq: number, prompt: PromptUsage, wait: (ms: number) => Promise<void>): Promise<void> {
  const model = typeof request.body?.model === 'string' ? request.body.model : 'claude-fake';
  const frames = streamFrames(step, model, seq, prompt).map(serializeFrame);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': `req_fake_${seq}`,
  });
  res.flushHeaders();
  if (step.firstEventDelayMs !== undefined) await pause(res, step.firstEventDelayMs, step.pingIntervalMs ?? null, wait);
  const fault = step.fault;
  const cut = fault === undefined ? frames.length : fault.afterFrames < 0 ? frames.length + fault.afterFrames : fault.afterFrames;
  for (const frame of frames.slice(0, cut)) {
    if (res.destroyed) return;
    res.write(frame);
  }
  if (fault === undefined) res.end();
  else applyFault(res, fault);
}

function applyFault(res: ServerResponse, fault: StreamFault): void {
  if (res.destroyed) return;
  switch (fault.kind) {
    case 'disconnect':
      // Close the connection mid-body: the frames already written still reach the client, then
      // the chunked body stops without its terminator, as when a proxy or the server goes away.
      res.socket?.end();
      return;
    case 'end':
      res.end();
      return;
    case 'hang':
      return;
    case 'malformed':
      res.end(malformedFrame());
      return;
    case 'error_event':
      res.end(errorFrame(fault.errorType, fault.message ?? 'Overloaded'));
  }
}

/** Waits `ms` before the first event, sending a ping every `pingMs` meanwhile when asked. */
async function pause(res: ServerResponse, ms: number, pingMs: number | null, wait: (ms: number) => Promise<void>): Promise<void> {
  if (pingMs === null || pingMs <= 0) return wait(ms);
  for (let left = ms; left > 0 && !res.destroyed; left -= pingMs) {
    await wait(Math.min(pingMs, left));
    if (!res.destroyed) res.write(serializeFrame({ event: 'ping', data: { type: 'ping' } }));
  }
}

/** A server-side pause (part of the scripted behaviour, not test synchronisation); cancelled by close. */
function delay(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}
