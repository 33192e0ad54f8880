/**
 * The Anthropic adapter when things go wrong on the wire: dropped connections, aborts, timeouts,
 * malformed streams and in-stream error events — real SDK, fake server on loopback.
 */
import { Readable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError, LlmBadResponseError, LlmTransientError } from '../../../src/core/errors/index.js';
import { classifyLlmError } from '../../../src/core/retry/index.js';
import { createNodeHttpFetch } from '../../../src/llm/node-http-fetch.js';
import { AnthropicLlm, AnthropicStreamRejectedError, AnthropicStreamTransientError, type AnthropicLlmOptions } from '../../../src/llm/anthropic/index.js';
import { llmRequest, recordingHandlers } from '../../support/fake-anthropic/llm-request.js';
import { startFakeAnthropicServer, textStep, type FakeAnthropicServer, type StreamStep } from '../../support/fake-anthropic-server.js';

let server: FakeAnthropicServer;
/** Every test runs over both HTTP clients the adapter can use (LLM_HTTP_CLIENT): node:http and fetch. */
let httpClient: 'node' | 'fetch' = 'node';
const nodeHttpFetch = createNodeHttpFetch();
const anthropicLlm = (options: AnthropicLlmOptions) => new AnthropicLlm({ ...options, ...(httpClient === 'node' ? { fetch: nodeHttpFetch } : {}) });
let llm: AnthropicLlm;
const live = () => ({ signal: new AbortController().signal });
/** Frame 3 is the first text delta (message_start, content_block_start, ping, delta …). */
const AFTER_FIRST_DELTA = 4;

function twoChunks(fault: StreamStep['fault']): StreamStep {
  return { ...textStep(['first', 'second']), fault };
}

/**
 * The current HTTP client, with every SSE frame of the fake server's reply that contains `marker`
 * replaced by `frame` on its way to the SDK: a frame the server's script cannot express.
 */
function rewritingFetch(marker: string, frame: string): typeof fetch {
  const inner = httpClient === 'node' ? nodeHttpFetch : fetch;
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await inner(input, init);
    const chunks: Buffer[] = [];
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
    const frames = Buffer.concat(chunks).toString('utf8').split('\n\n');
    const body = frames.map((original) => (original.includes(marker) ? frame : original)).join('\n\n');
    // Same body type as the client answers with: a Node stream (node:http) or a web stream (fetch).
    return httpClient === 'node' ? Object.assign({}, response, { body: Readable.from([Buffer.from(body)]) }) : new Response(body, response);
  }) as typeof fetch;
}

beforeEach(async () => {
  server = await startFakeAnthropicServer();
  llm = anthropicLlm({ apiKey: 'sk-ant-test', baseUrl: server.url, model: 'claude-test', timeoutMs: 10_000 });
});

afterEach(async () => {
  await server.close();
});

describe.each(['node', 'fetch'] as const)('over the %s HTTP client', (client) => {
  beforeAll(() => {
    httpClient = client;
  });

  describe('AnthropicLlm connection faults', () => {
    it('a connection cut mid-stream is a retryable connection error', async () => {
      server.push(twoChunks({ kind: 'disconnect', afterFrames: AFTER_FIRST_DELTA }));
      const handlers = recordingHandlers();
      const error = await llm.complete(llmRequest(), { ...live(), handlers }).catch((caught: unknown) => caught);
      expect(handlers.text).toEqual(['first']);
      expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'connection' });
      expect(server.requests).toHaveLength(1);
    });

    it('a connection dropped before any response is a retryable APIConnectionError', async () => {
      server.push({ kind: 'drop' });
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'APIConnectionError' });
      expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'connection' });
      expect(server.requests).toHaveLength(1);
    });

    it('no headers within timeoutMs is a retryable APIConnectionTimeoutError', async () => {
      const quick = anthropicLlm({ apiKey: 'sk-ant-test', baseUrl: server.url, model: 'm', timeoutMs: 100 });
      server.push({ kind: 'hang' });
      const error = await quick.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'APIConnectionTimeoutError' });
      expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'connection' });
      expect(await server.requests[0]!.closed).toEqual({ early: true });
    });
  });

  describe('AnthropicLlm silent streams', () => {
    const withTimeout = (timeoutMs: number) => anthropicLlm({ apiKey: 'sk-ant-test', baseUrl: server.url, model: 'm', timeoutMs });

    it('a stream silent for timeoutMs after a delta is aborted as a retryable stall', async () => {
      server.push(twoChunks({ kind: 'hang', afterFrames: AFTER_FIRST_DELTA }));
      const handlers = recordingHandlers();
      const error = await withTimeout(200).complete(llmRequest(), { ...live(), handlers }).catch((caught: unknown) => caught);
      expect(handlers.text).toEqual(['first']);
      expect(error).toBeInstanceOf(LlmTransientError);
      expect(error).toMatchObject({ code: 'llm.transient', details: { reason: 'stalled', idleTimeoutMs: 200 } });
      expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'typed' });
      expect(await server.requests[0]!.closed).toEqual({ early: true });
    });

    it('a first event later than timeoutMs, with no ping meanwhile, is a stall', async () => {
      server.push(textStep('late', { firstEventDelayMs: 2_000 }));
      const error = await withTimeout(200).complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'llm.transient', details: { reason: 'stalled' } });
    });

    it.each([
      ['stays open', 'hang'],
      ['breaks off', 'disconnect'],
    ] as const)('a body that %s after message_stop: the whole answer still, without waiting out the idle timeout', async (_, kind) => {
      server.push(twoChunks({ kind, afterFrames: Number.MAX_SAFE_INTEGER }));
      // An idle timeout longer than the test's own: the body left open is cut after END_OF_ANSWER_GRACE_MS.
      const response = await withTimeout(120_000).complete(llmRequest(), live());
      expect(response).toMatchObject({ text: 'firstsecond', finishReason: 'stop' });
      expect(await server.requests[0]!.closed).toEqual({ early: true });
    });

    it('pings keep a slow stream alive: a first event after several timeouts still arrives', async () => {
      server.push(textStep('worth the wait', { firstEventDelayMs: 750, pingIntervalMs: 50 }));
      expect((await withTimeout(250).complete(llmRequest(), live())).text).toBe('worth the wait');
    });
  });

  describe('AnthropicLlm cancellation', () => {
    it('an abort mid-stream rejects with the signal’s reason and closes the socket', async () => {
      server.push(twoChunks({ kind: 'hang', afterFrames: AFTER_FIRST_DELTA }));
      const controller = new AbortController();
      const reason = new CancelledError('user cancelled');
      const handlers = recordingHandlers();
      const call = llm.complete(llmRequest(), {
        signal: controller.signal,
        handlers: { onTextDelta: (text) => (handlers.onTextDelta!(text), controller.abort(reason)) },
      });
      await expect(call).rejects.toBe(reason);
      expect(handlers.text).toEqual(['first']);
      expect(await server.requests[0]!.closed).toEqual({ early: true });
    }, 5_000);

    it('an abort while waiting for the headers rejects with the reason, as a CancelledError', async () => {
      const controller = new AbortController();
      server.push(() => {
        controller.abort('shutdown');
        return { kind: 'hang' };
      });
      const error = await llm.complete(llmRequest(), { signal: controller.signal }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CancelledError);
      expect((error as CancelledError).message).toBe('shutdown');
      expect(await server.requests[0]!.closed).toEqual({ early: true });
    }, 5_000);

    it('an already aborted signal sends nothing', async () => {
      const controller = new AbortController();
      controller.abort(new CancelledError('early'));
      await expect(llm.complete(llmRequest(), { signal: controller.signal })).rejects.toBe(controller.signal.reason);
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('AnthropicLlm malformed streams', () => {
    it('a data line that is not JSON is a retryable llm.bad_response', async () => {
      server.push(twoChunks({ kind: 'malformed', afterFrames: AFTER_FIRST_DELTA }));
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LlmBadResponseError);
      expect(error).toMatchObject({ code: 'llm.bad_response', cause: expect.any(SyntaxError) });
      expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'typed', status: null });
    });

    it.each([
      ['null', 'data: null', /an event is null, not a JSON object/],
      ['a number', 'data: 42', /an event is a number, not a JSON object/],
      ['an event without its delta', 'data: {"type":"content_block_delta","index":0}', /content_block_delta without a delta/],
    ])('a content_block_delta whose data is %s is a retryable llm.bad_response, not a TypeError', async (_name, data, message) => {
      server.push(textStep(['first', 'second']));
      const faulty = new AnthropicLlm({ apiKey: 'sk-ant-test', baseUrl: server.url, model: 'm', timeoutMs: 10_000, fetch: rewritingFetch('"second"', `event: content_block_delta\n${data}`) });
      const handlers = recordingHandlers();
      const error = await faulty.complete(llmRequest(), { ...live(), handlers }).catch((caught: unknown) => caught);
      expect(handlers.text).toEqual(['first']);
      expect(error).not.toBeInstanceOf(TypeError);
      expect(error).toBeInstanceOf(LlmBadResponseError);
      expect(error).toMatchObject({ code: 'llm.bad_response', details: { provider: 'anthropic' } });
      expect((error as Error).message).toMatch(message);
      expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'typed', status: null });
      expect(server.requests).toHaveLength(1);
    });

    it('a stream that ends without message_stop is a retryable llm.bad_response', async () => {
      server.push(twoChunks({ kind: 'end', afterFrames: -1 }));
      const handlers = recordingHandlers();
      const error = await llm.complete(llmRequest(), { ...live(), handlers }).catch((caught: unknown) => caught);
      expect(handlers.text).toEqual(['first', 'second']);
      expect(error).toBeInstanceOf(LlmBadResponseError);
      expect((error as Error).message).toMatch(/ended before message_stop/);
    });

    it('an in-stream overloaded_error is retryable like a 529', async () => {
      server.push(twoChunks({ kind: 'error_event', afterFrames: AFTER_FIRST_DELTA, errorType: 'overloaded_error', message: 'Overloaded' }));
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AnthropicStreamTransientError);
      expect(error).toMatchObject({ errorType: 'overloaded_error', status: 529, message: 'Anthropic stream error overloaded_error: Overloaded' });
      expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'typed', status: 529 });
      expect(server.requests).toHaveLength(1);
    });

    it('an in-stream invalid_request_error is not retryable', async () => {
      server.push(twoChunks({ kind: 'error_event', afterFrames: AFTER_FIRST_DELTA, errorType: 'invalid_request_error', message: 'bad' }));
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AnthropicStreamRejectedError);
      expect(classifyLlmError(error)).toEqual({ retryable: false, reason: 'typed', status: 400 });
    });
  });
});
