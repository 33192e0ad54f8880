/**
 * How the OpenAI adapter fails, over the real SDK against the fake server: every error must reach the
 * loop's retry policy classified correctly (`classifyLlmError`, `retryAfterMs`), after exactly one
 * HTTP request — the SDK's own retries are off.
 */
import { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError, LlmBadResponseError, LlmNonRetryableError, LlmTransientError } from '../../../src/core/errors/index.js';
import { classifyLlmError, retryAfterMs } from '../../../src/core/retry/index.js';
import { createNodeHttpFetch } from '../../../src/llm/node-http-fetch.js';
import { OpenAiLlm } from '../../../src/llm/openai/index.js';
import { errorResponse, FakeOpenAiServer, textStream } from '../../support/fake-openai-server.js';
import { llmRequest, recordingHandlers } from '../../support/fake-openai/llm-request.js';

const server = new FakeOpenAiServer();
/** Every test runs over both HTTP clients the adapter can use (LLM_HTTP_CLIENT): node:http and fetch. */
let httpClient: 'node' | 'fetch' = 'node';
const nodeHttpFetch = createNodeHttpFetch();
const httpClientOption = () => (httpClient === 'node' ? { fetch: nodeHttpFetch } : {});
const signal = () => new AbortController().signal;
const adapter = (baseUrl = server.url, timeoutMs = 10_000) => new OpenAiLlm({ apiKey: 'sk-test', baseUrl, model: 'gpt-4o-mini', timeoutMs, ...httpClientOption() });
const failure = (promise: Promise<unknown>) => promise.then(() => expect.fail('expected the call to fail'), (error: unknown) => error);

beforeAll(async () => {
  await server.start();
});
beforeEach(() => server.reset());
afterAll(() => server.close());

describe.each(['node', 'fetch'] as const)('over the %s HTTP client', (client) => {
  beforeAll(() => {
    httpClient = client;
  });

  describe('OpenAiLlm: HTTP errors', () => {
    it.each([408, 409, 429, 500, 502, 503, 504])('HTTP %i → retryable by status, one request', async (status) => {
      server.enqueue(errorResponse(status, { message: `status ${status} from the fake` }));
      const error = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      expect(error).toBeInstanceOf(APIError);
      expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'http_status', status });
      expect((error as APIError).message).toContain(`status ${status} from the fake`);
      expect((error as APIError).requestID).toBe('req_fake0001');
      expect(server.requests).toHaveLength(1);
    });

    it.each([400, 401, 403, 404, 422])('HTTP %i → not retryable, one request', async (status) => {
      server.enqueue(errorResponse(status));
      const error = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      expect(classifyLlmError(error)).toEqual({ retryable: false, reason: 'http_status', status });
      expect(server.requests).toHaveLength(1);
    });

    it('the error body fields are readable (type, code, param)', async () => {
      server.enqueue(errorResponse(400, { message: "Invalid 'messages[2].tool_call_id'", param: 'messages' }));
      const error = (await failure(adapter().complete(llmRequest(), { signal: signal() }))) as APIError;
      expect({ type: error.type, code: error.code, param: error.param }).toEqual({ type: 'invalid_request_error', code: null, param: 'messages' });
    });

    it('retry-after (seconds) and retry-after-ms are read by retryAfterMs', async () => {
      server.enqueue(errorResponse(429, { headers: { 'retry-after': '3' } }), errorResponse(503, { headers: { 'retry-after-ms': '250', 'retry-after': '7' } }));
      const first = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      const second = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      expect(retryAfterMs(first)).toBe(3000);
      expect(retryAfterMs(second)).toBe(250);
      expect(server.requests).toHaveLength(2);
    });

    it.each([
      [400, false],
      [503, true],
    ])('HTTP %i whose body stalls → fails at timeoutMs with its status (retryable: %s); connection closed', async (status, retryable) => {
      server.enqueue(errorResponse(status, { stallBody: true }));
      const error = await failure(adapter(server.url, 200).complete(llmRequest(), { signal: signal() }));
      expect(error).toBeInstanceOf(APIError);
      expect(classifyLlmError(error)).toEqual({ retryable, reason: 'http_status', status });
      expect(await server.requests[0]!.closed).toEqual({ completed: false });
    });

    it('nothing listening → LlmTransientError(connection)', async () => {
      const gone = new FakeOpenAiServer();
      const { url, close } = await gone.start();
      await close();
      const error = await failure(adapter(url).complete(llmRequest(), { signal: signal() }));
      expect(error).toBeInstanceOf(LlmTransientError);
      expect((error as LlmTransientError).details.reason).toBe('connection');
      expect(classifyLlmError(error).retryable).toBe(true);
    });
  });

  describe('OpenAiLlm: broken streams', () => {
    it('the connection drops mid-stream after some text → thrown anyway, retryable', async () => {
      server.enqueue(textStream(['one ', 'two ', 'three'], { cut: { afterEvents: 2, how: 'destroy' } }));
      const handlers = recordingHandlers();
      const error = await failure(adapter().complete(llmRequest(), { signal: signal(), handlers }));
      expect(handlers.events).toEqual(['text:one ', 'text:two ']);
      expect(error).toBeInstanceOf(LlmTransientError);
      expect(classifyLlmError(error).retryable).toBe(true);
      expect(server.requests).toHaveLength(1);
    });

    it('a chunk that is not JSON → LlmBadResponseError', async () => {
      server.enqueue({ kind: 'stream', events: [{ delta: { content: 'ok' } }, { raw: '{not json' }] });
      const error = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      expect(error).toBeInstanceOf(LlmBadResponseError);
      expect((error as LlmBadResponseError).cause).toBeInstanceOf(SyntaxError);
      expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'typed' });
    });

    it('a chunk of the wrong shape → LlmBadResponseError', async () => {
      server.enqueue({ kind: 'stream', events: [{ delta: { content: { text: 'x' } } }] });
      expect(await failure(adapter().complete(llmRequest(), { signal: signal() }))).toBeInstanceOf(LlmBadResponseError);
    });

    it('a stream that ends cleanly without a finish reason or [DONE] → LlmBadResponseError', async () => {
      server.enqueue(textStream(['half an ans'], { cut: { afterEvents: 1, how: 'end' } }));
      expect(await failure(adapter().complete(llmRequest(), { signal: signal() }))).toBeInstanceOf(LlmBadResponseError);
    });

    it('[DONE] without any finish reason → LlmBadResponseError', async () => {
      server.enqueue(textStream(['text'], { finishReason: null }));
      expect(await failure(adapter().complete(llmRequest(), { signal: signal() }))).toBeInstanceOf(LlmBadResponseError);
    });

    it.each([
      ['OpenAI’s invalid_request_error', false, 400, { message: 'maximum context length exceeded', type: 'invalid_request_error', param: null, code: 'context_length_exceeded' }],
      ['a compatible server’s code 400', false, 400, { message: 'prompt too long', code: 400 }],
      ['a compatible server’s code "422"', false, 422, { message: 'bad field', code: '422' }],
      ['a compatible server’s code 502', true, null, { message: 'upstream failed', code: 502 }],
      ['a compatible server’s code 429', true, null, { message: 'rate limited upstream', code: 429 }],
    ])('an error event inside a 200 stream carrying %s → retryable: %s, status %s', async (_, retryable, status, body) => {
      server.enqueue({ kind: 'stream', events: [{ delta: { content: 'par' } }, { raw: JSON.stringify({ error: body }) }] });
      const error = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      expect(error).toBeInstanceOf(retryable ? LlmTransientError : LlmNonRetryableError);
      expect(error).toMatchObject({ details: { provider: 'openai', reason: 'stream_error', errorCode: body.code } });
      // A refusal carries the status it stands for, so a fallback does not bench the provider for it.
      expect(classifyLlmError(error)).toEqual({ retryable, reason: 'typed', status });
    });

    it('an error event inside a 200 stream → LlmTransientError(stream_error)', async () => {
      const event = JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });
      server.enqueue({ kind: 'stream', events: [{ delta: { content: 'par' } }, { raw: event }] });
      const error = await failure(adapter().complete(llmRequest(), { signal: signal() }));
      expect(error).toBeInstanceOf(LlmTransientError);
      expect((error as LlmTransientError).details).toMatchObject({ reason: 'stream_error', type: 'server_error' });
    });
  });

  describe('OpenAiLlm: cancellation', () => {
    it('abort after the first delta → the signal reason, promptly; the server sees the connection close', async () => {
      server.enqueue(textStream(['first', 'second'], { cut: { afterEvents: 1, how: 'hang' } }));
      const controller = new AbortController();
      const reason = new CancelledError('user cancelled');
      const texts: string[] = [];
      const started = Date.now();
      const error = await failure(
        adapter().complete(llmRequest(), {
          signal: controller.signal,
          handlers: {
            onTextDelta: (text) => {
              texts.push(text);
              controller.abort(reason);
            },
          },
        }),
      );
      expect(error).toBe(reason);
      expect(texts).toEqual(['first']);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(await server.requests[0]!.closed).toEqual({ completed: false });
    });

    it.each([
      ['the server has not answered at all', { kind: 'hang' } as const],
      ['an error status’s body stalls', errorResponse(500, { stallBody: true })],
    ])('abort while %s → the signal reason; connection closed', async (_while, script) => {
      server.enqueue(script);
      const controller = new AbortController();
      const pending = failure(adapter().complete(llmRequest(), { signal: controller.signal }));
      const request = await server.waitForRequest(1);
      controller.abort('shutdown');
      const error = await pending;
      expect(error).toBeInstanceOf(CancelledError);
      expect((error as CancelledError).message).toBe('shutdown');
      expect(await request.closed).toEqual({ completed: false });
    });

    it('a throwing handler: its error propagates and the request is closed', async () => {
      server.enqueue(textStream(['a', 'b'], { cut: { afterEvents: 1, how: 'hang' } }));
      const bug = new Error('listener bug');
      const error = await failure(
        adapter().complete(llmRequest(), {
          signal: signal(),
          handlers: {
            onTextDelta: () => {
              throw bug;
            },
          },
        }),
      );
      expect(error).toBe(bug);
      expect(await server.requests[0]!.closed).toEqual({ completed: false });
    });
  });
});
