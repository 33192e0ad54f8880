/**
 * The OpenAI adapter over the real SDK against the fake Chat Completions server: streaming, tool
 * calls, usage, thinking, and the exact request it sends. Errors: openai-adapter-errors.test.ts; the
 * loop end to end: openai-adapter-loop.test.ts.
 */
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmTransientError } from '../../../src/core/errors/index.js';
import { createNodeHttpFetch } from '../../../src/llm/node-http-fetch.js';
import { OpenAiLlm, type OpenAiLlmOptions } from '../../../src/llm/openai/index.js';
import { FakeOpenAiServer, reasoningEvents, textEvents, textStream, toolCallEvents, usageBody } from '../../support/fake-openai-server.js';
import { llmRequest, recordingHandlers } from '../../support/fake-openai/llm-request.js';

const server = new FakeOpenAiServer();
/** Every test runs over both HTTP clients the adapter can use (LLM_HTTP_CLIENT): node:http and fetch. */
let httpClient: 'node' | 'fetch' = 'node';
const nodeHttpFetch = createNodeHttpFetch();
const httpClientOption = () => (httpClient === 'node' ? { fetch: nodeHttpFetch } : {});
const signal = () => new AbortController().signal;
const tool = { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };

function adapter(overrides: Partial<OpenAiLlmOptions> = {}): OpenAiLlm {
  return new OpenAiLlm({ apiKey: 'sk-test-123', baseUrl: server.url, model: 'gpt-4o-mini', timeoutMs: 10_000, ...httpClientOption(), ...overrides });
}

beforeAll(async () => {
  await server.start();
});
beforeEach(() => server.reset());
afterAll(() => server.close());

describe.each(['node', 'fetch'] as const)('over the %s HTTP client', (client) => {
  beforeAll(() => {
    httpClient = client;
  });

  describe('OpenAiLlm: streaming', () => {
    it('plain text: deltas in order, then the response', async () => {
      server.enqueue(textStream(['Hel', 'lo', ' world'], { usage: usageBody({ prompt: 9, completion: 3 }) }));
      const handlers = recordingHandlers();
      const response = await adapter().complete(llmRequest(), { signal: signal(), handlers });
      expect(handlers.events).toEqual(['text:Hel', 'text:lo', 'text: world']);
      expect(response).toEqual({
        text: 'Hello world',
        thinking: '',
        toolCalls: [],
        finishReason: 'stop',
        rawFinishReason: 'stop',
        usage: { promptTokens: 9, completionTokens: 3, totalTokens: 12, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        model: 'gpt-4o-mini',
        provider: 'openai',
      });
      expect(server.requests).toHaveLength(1);
    });

    it('one tool call with its arguments in fragments', async () => {
      server.enqueue({ kind: 'stream', events: toolCallEvents([{ id: 'call_abc', name: 'read_file', arguments: '{"path":"notes/today.md"}' }], { pieces: 5 }) });
      const response = await adapter().complete(llmRequest({ tools: [tool], toolChoice: 'auto' }), { signal: signal() });
      expect(response.toolCalls).toEqual([{ id: 'call_abc', name: 'read_file', arguments: '{"path":"notes/today.md"}' }]);
      expect(response).toMatchObject({ text: '', finishReason: 'tool_calls', rawFinishReason: 'tool_calls' });
    });

    it('parallel tool calls, fragments interleaved, after some text', async () => {
      const calls = [
        { id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' },
        { id: 'call_2', name: 'read_file', arguments: '{"path":"b.txt"}' },
        { id: 'call_3', name: 'list_dir', arguments: '{"path":"."}' },
      ];
      server.enqueue({ kind: 'stream', events: [...textEvents(['Reading ', 'three.']), ...toolCallEvents(calls, { pieces: 4, interleave: true })] });
      const handlers = recordingHandlers();
      const response = await adapter().complete(llmRequest({ tools: [tool], toolChoice: 'auto' }), { signal: signal(), handlers });
      expect(response.text).toBe('Reading three.');
      expect(response.toolCalls).toEqual(calls);
      expect(handlers.events).toEqual(['text:Reading ', 'text:three.']);
    });

    it('usage with cached and reasoning tokens', async () => {
      server.enqueue(textStream(['ok'], { usage: usageBody({ prompt: 2048, completion: 400, cached: 1536, reasoning: 320 }) }));
      const response = await adapter().complete(llmRequest(), { signal: signal() });
      expect(response.usage).toEqual({ promptTokens: 2048, completionTokens: 400, totalTokens: 2448, cachedTokens: 1536, cacheWriteTokens: 0, reasoningTokens: 320 });
    });

    it.each(['reasoning_content', 'reasoning'] as const)('thinking deltas (%s) before the answer', async (field) => {
      server.enqueue({ kind: 'stream', events: [...reasoningEvents(['The user ', 'wants a greeting.'], field), ...textEvents(['Hi!'])] });
      const handlers = recordingHandlers();
      const response = await adapter().complete(llmRequest(), { signal: signal(), handlers });
      expect(handlers.events).toEqual(['think:The user ', 'think:wants a greeting.', 'text:Hi!']);
      expect(response).toMatchObject({ thinking: 'The user wants a greeting.', text: 'Hi!' });
    });

    it('the model that answered, from the stream', async () => {
      server.enqueue(textStream(['x'], { model: 'gpt-4o-mini-2024-07-18' }));
      expect((await adapter().complete(llmRequest(), { signal: signal() })).model).toBe('gpt-4o-mini-2024-07-18');
    });

    it('finish_reason length is reported, with the partial text', async () => {
      server.enqueue(textStream(['Once upon'], { finishReason: 'length' }));
      expect(await adapter().complete(llmRequest({ maxTokens: 2 }), { signal: signal() })).toMatchObject({ text: 'Once upon', finishReason: 'length', rawFinishReason: 'length' });
    });

    it('a slow first token: nothing is streamed until it comes', async () => {
      let release!: () => void;
      server.enqueue(textStream(['late'], { holdFirstChunk: new Promise<void>((resolve) => (release = resolve)) }));
      const handlers = recordingHandlers();
      const pending = adapter().complete(llmRequest(), { signal: signal(), handlers });
      await server.waitForRequest(1);
      expect(handlers.events).toEqual([]);
      release();
      expect((await pending).text).toBe('late');
      expect(handlers.events).toEqual(['text:late']);
    });
  });

  describe('OpenAiLlm: the request it sends', () => {
    it('no tools: no tools and no tool_choice; streaming with usage; bearer auth; JSON', async () => {
      server.enqueue(textStream(['ok']));
      await adapter().complete(llmRequest({ toolChoice: 'auto' }), { signal: signal() });
      const [sent] = server.requests;
      expect(sent!.method).toBe('POST');
      expect(sent!.path).toBe('/v1/chat/completions');
      expect(sent!.headers.authorization).toBe('Bearer sk-test-123');
      expect(sent!.headers['content-type']).toMatch(/^application\/json/);
      expect(sent!.body).toEqual({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are a test.' },
          { role: 'user', content: 'hi' },
        ],
        stream: true,
        stream_options: { include_usage: true },
        prompt_cache_key: 's1',
      });
    });

    it('tools, tool_choice, max_tokens, temperature, response_format and the per-request model', async () => {
      server.enqueue(textStream(['{"answer":"x"}']));
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
      const request = llmRequest({ model: 'gpt-4.1', tools: [tool], toolChoice: 'auto', maxTokens: 321, temperature: 0, responseFormat: { name: 'answer', schema } });
      await adapter().complete(request, { signal: signal() });
      expect(server.requests[0]!.body).toMatchObject({
        model: 'gpt-4.1',
        tools: [{ type: 'function', function: tool }],
        tool_choice: 'auto',
        max_tokens: 321,
        temperature: 0,
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      });
    });

    it('a user name OpenAI would refuse (a space) is sent in its alphabet', async () => {
      server.enqueue(textStream(['ok']));
      await adapter().complete(llmRequest({ messages: [{ role: 'user', content: 'hi', name: 'Jane Doe' }] }), { signal: signal() });
      const [, user] = server.requests[0]!.body.messages as { role: string; name?: string }[];
      expect(user).toEqual({ role: 'user', content: 'hi', name: 'Jane_Doe' });
      expect(user!.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    });

    it('honours a base URL with its own path (an OpenAI-compatible endpoint)', async () => {
      server.enqueue(textStream(['ok']));
      const origin = new URL(server.url).origin;
      await adapter({ baseUrl: `${origin}/compat/api/v1` }).complete(llmRequest(), { signal: signal() });
      expect(server.requests[0]!.path).toBe('/compat/api/v1/chat/completions');
    });

    it('uses the fetch it was given', async () => {
      server.enqueue(textStream(['ok']));
      const urls: string[] = [];
      const fetchSpy: typeof fetch = (input, init) => {
        urls.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      };
      await adapter({ fetch: fetchSpy }).complete(llmRequest(), { signal: signal() });
      expect(urls).toEqual([`${server.url}/chat/completions`]);
    });
  });

  describe('OpenAiLlm: timeouts', () => {
    it('no response headers within timeoutMs → LlmTransientError(timeout), one request', async () => {
      server.enqueue(textStream(['late'], { headersDelayMs: 30_000 }));
      const error = await adapter({ timeoutMs: 200 }).complete(llmRequest(), { signal: signal() }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LlmTransientError);
      expect((error as LlmTransientError).details.reason).toBe('timeout');
      expect(server.requests).toHaveLength(1);
    });

    it('a stream that stalls after its first delta → LlmTransientError(stalled), connection closed', async () => {
      server.enqueue(textStream(['first', 'never'], { cut: { afterEvents: 1, how: 'hang' } }));
      const handlers = recordingHandlers();
      const error = await adapter({ timeoutMs: 300 }).complete(llmRequest(), { signal: signal(), handlers }).catch((caught: unknown) => caught);
      expect(handlers.events).toEqual(['text:first']);
      expect(error).toBeInstanceOf(LlmTransientError);
      expect((error as LlmTransientError).details.reason).toBe('stalled');
      expect(await server.requests[0]!.closed).toEqual({ completed: false });
    });

    it.each([
      ['stays open', 'hang'],
      ['breaks off', 'destroy'],
    ] as const)('a body that %s after [DONE]: the whole answer still, without waiting out the idle timeout', async (_, how) => {
      const events = [...textEvents(['all', ' there']), { delta: {}, finishReason: 'stop' }, { raw: '[DONE]' }];
      server.enqueue({ kind: 'stream', events, finishReason: null, cut: { afterEvents: events.length, how } });
      // An idle timeout longer than the test's own: the body left open is cut after END_OF_ANSWER_GRACE_MS.
      const response = await adapter({ timeoutMs: 120_000 }).complete(llmRequest(), { signal: signal() });
      expect(response).toMatchObject({ text: 'all there', finishReason: 'stop' });
      expect(await server.requests[0]!.closed).toEqual({ completed: false });
    });

    it('SSE comment keep-alives keep a slow stream alive: a first event after several timeouts still arrives', async () => {
      server.enqueue(textStream(['worth the wait']));
      const llm = adapter({ timeoutMs: 250, fetch: keepAliveFetch(15, 50) });
      expect((await llm.complete(llmRequest(), { signal: signal() })).text).toBe('worth the wait');
    });
  });
});

/**
 * The current HTTP client, with `count` SSE comments sent `intervalMs` apart before the server's body —
 * the keep-alive OpenRouter sends while its upstream model thinks (`: OPENROUTER PROCESSING`): a long
 * pause between events that is no pause in the bytes. The server's stream is held back meanwhile.
 */
function keepAliveFetch(count: number, intervalMs: number): typeof fetch {
  const inner = httpClient === 'node' ? nodeHttpFetch : fetch;
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await inner(input, init);
    const signal = init?.signal ?? undefined;
    async function* body(): AsyncGenerator<Uint8Array> {
      for (let sent = 0; sent < count; sent += 1) {
        yield Buffer.from(': OPENROUTER PROCESSING\n\n');
        await delay(intervalMs, undefined, { signal });
      }
      yield* response.body as unknown as AsyncIterable<Uint8Array>;
    }
    // Same body type as the client answers with: a Node stream (node:http) or a web stream (fetch).
    const stream = Readable.from(body());
    return httpClient === 'node' ? Object.assign({}, response, { body: stream }) : new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, response);
  }) as typeof fetch;
}
