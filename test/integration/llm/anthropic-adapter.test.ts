/**
 * The Anthropic adapter through the real SDK against the protocol-faithful fake server: streaming,
 * tool calls, usage, thinking, the request it sends, and how HTTP errors are classified.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classifyLlmError, resolveRetryPolicy, retryAfterMs, runWithRetry } from '../../../src/core/retry/index.js';
import type { Message } from '../../../src/core/messages.js';
import type { Clock } from '../../../src/core/ports/clock.js';
import { createNodeHttpFetch } from '../../../src/llm/node-http-fetch.js';
import { AnthropicLlm, type AnthropicLlmOptions } from '../../../src/llm/anthropic/index.js';
import { ECHO_TOOL, llmRequest, recordingHandlers } from '../../support/fake-anthropic/llm-request.js';
import { errorStep, startFakeAnthropicServer, textStep, toolStep, type FakeAnthropicServer } from '../../support/fake-anthropic-server.js';

let server: FakeAnthropicServer;
/** Every test runs over both HTTP clients the adapter can use (LLM_HTTP_CLIENT): node:http and fetch. */
let httpClient: 'node' | 'fetch' = 'node';
const nodeHttpFetch = createNodeHttpFetch();
const anthropicLlm = (options: AnthropicLlmOptions) => new AnthropicLlm({ ...options, ...(httpClient === 'node' ? { fetch: nodeHttpFetch } : {}) });
let llm: AnthropicLlm;
const live = () => ({ signal: new AbortController().signal });

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

  describe('AnthropicLlm streaming', () => {
    it('streams plain text, delta by delta', async () => {
      server.push(textStep(['Hel', 'lo', ' world'], { usage: { inputTokens: 21, outputTokens: 3 } }));
      const handlers = recordingHandlers();
      const response = await llm.complete(llmRequest(), { ...live(), handlers });
      expect(handlers.text).toEqual(['Hel', 'lo', ' world']);
      expect(response).toEqual({
        text: 'Hello world',
        thinking: '',
        toolCalls: [],
        finishReason: 'stop',
        rawFinishReason: 'end_turn',
        usage: { promptTokens: 21, completionTokens: 3, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 24 },
        model: 'claude-test',
        provider: 'anthropic',
      });
    });

    it('returns one tool call', async () => {
      server.push(toolStep([{ id: 'toolu_01', name: 'echo', input: { text: 'x' } }]));
      const response = await llm.complete(llmRequest({ tools: [ECHO_TOOL], toolChoice: 'auto' }), live());
      expect(response).toMatchObject({ text: '', finishReason: 'tool_calls', rawFinishReason: 'tool_use' });
      expect(response.toolCalls).toEqual([{ id: 'toolu_01', name: 'echo', arguments: '{"text":"x"}' }]);
    });

    it('returns parallel tool calls after text, in block order', async () => {
      server.push(toolStep([{ id: 'toolu_a', name: 'echo', input: { text: 'a' } }, { id: 'toolu_b', name: 'echo', input: { text: 'b' } }, { id: 'toolu_c', name: 'echo' }], { text: 'Three calls.' }));
      const handlers = recordingHandlers();
      const response = await llm.complete(llmRequest({ tools: [ECHO_TOOL], toolChoice: 'auto' }), { ...live(), handlers });
      expect(handlers.text).toEqual(['Three calls.']);
      expect(response.toolCalls).toEqual([
        { id: 'toolu_a', name: 'echo', arguments: '{"text":"a"}' },
        { id: 'toolu_b', name: 'echo', arguments: '{"text":"b"}' },
        { id: 'toolu_c', name: 'echo', arguments: '{}' },
      ]);
    });

    it('joins input JSON streamed in many small fragments, escapes and non-ASCII split anywhere', async () => {
      const json = JSON.stringify({ path: 'docs/naïve.md', content: 'line "one"\nline two ✓', n: [1, 2, 3] });
      server.push(toolStep([{ id: 'toolu_x', name: 'write', inputChunks: ['', ...json.match(/.{1,3}/gs)!] }]));
      const response = await llm.complete(llmRequest({ tools: [ECHO_TOOL], toolChoice: 'auto' }), live());
      expect(response.toolCalls[0]!.arguments).toBe(json);
      expect(JSON.parse(response.toolCalls[0]!.arguments)).toEqual({ path: 'docs/naïve.md', content: 'line "one"\nline two ✓', n: [1, 2, 3] });
    });

    it('reports usage with cache reads and writes', async () => {
      server.push(textStep('ok', { usage: { inputTokens: 50, cacheReadInputTokens: 2000, cacheCreationInputTokens: 400, outputTokens: 9 } }));
      const response = await llm.complete(llmRequest(), live());
      expect(response.usage).toEqual({ promptTokens: 2450, completionTokens: 9, cachedTokens: 2000, cacheWriteTokens: 400, reasoningTokens: 0, totalTokens: 2459 });
    });

    it('streams thinking deltas apart from text', async () => {
      server.push({ kind: 'stream', blocks: [{ type: 'thinking', chunks: ['Let me ', 'think.'] }, { type: 'text', chunks: ['42'] }] });
      const handlers = recordingHandlers();
      const response = await llm.complete(llmRequest(), { ...live(), handlers });
      expect(handlers.thinking).toEqual(['Let me ', 'think.']);
      expect(handlers.text).toEqual(['42']);
      expect(response).toMatchObject({ text: '42', thinking: 'Let me think.' });
    });

    it('reports the model that answered and max_tokens as length', async () => {
      server.push(textStep('cut', { model: 'claude-other', stopReason: 'max_tokens' }));
      expect(await llm.complete(llmRequest(), live())).toMatchObject({ model: 'claude-other', finishReason: 'length', rawFinishReason: 'max_tokens' });
    });

    it('waits for a slow first event shorter than timeoutMs', async () => {
      server.push(textStep('late', { firstEventDelayMs: 100 }));
      expect((await llm.complete(llmRequest(), live())).text).toBe('late');
    });
  });

  describe('AnthropicLlm request shape', () => {
    it('sends system apart, tool results in one user turn with the notice after them, and the API headers', async () => {
      server.push(textStep('ok'));
      await llm.complete(
        llmRequest({
          systemPrompt: 'Be brief.',
          tools: [ECHO_TOOL],
          toolChoice: 'auto',
          maxTokens: 256,
          temperature: 0.7,
          messages: [
            { role: 'system', content: 'Memory: none.' },
            { role: 'user', content: 'go' },
            { role: 'assistant', content: 'Calling.', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"a"}' }, { id: 'c2', name: 'echo', arguments: '{"text":"b"}' }] },
            { role: 'tool', toolCallId: 'c1', name: 'echo', content: 'a' },
            { role: 'tool', toolCallId: 'c2', name: 'echo', content: 'failed', isError: true },
            { role: 'user', content: '[notice] truncated' },
          ],
        }),
        live(),
      );
      expect(server.requests).toHaveLength(1);
      const [request] = server.requests;
      expect(request!.method).toBe('POST');
      expect(request!.path).toBe('/v1/messages');
      expect(request!.headers).toMatchObject({ 'x-api-key': 'sk-ant-test', authorization: 'Bearer sk-ant-test', 'anthropic-version': '2026-10-21', 'content-type': 'application/json' });
      expect(request!.body).toEqual({
        model: 'claude-test',
        max_tokens: 256,
        stream: true,
        system: [{ type: 'text', text: 'Be brief.\n\nMemory: none.', cache_control: { type: 'ephemeral' } }],
        tools: [{ name: 'echo', description: ECHO_TOOL.description, input_schema: ECHO_TOOL.parameters, cache_control: { type: 'ephemeral' } }],
        tool_choice: { type: 'auto' },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'go' }] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Calling.' },
              { type: 'tool_use', id: 'c1', name: 'echo', input: { text: 'a' } },
              { type: 'tool_use', id: 'c2', name: 'echo', input: { text: 'b' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'c1', content: 'a' },
              { type: 'tool_result', tool_use_id: 'c2', content: 'failed', is_error: true },
              { type: 'text', text: '[notice] truncated' },
            ],
          },
        ],
      });
    });

    it('marks the prompt-cache prefix, and reports what the server read and wrote of it', async () => {
      const first: Message[] = [{ role: 'user', content: 'first question' }];
      const second = [...first, { role: 'assistant' as const, content: 'first answer' }, { role: 'user' as const, content: 'second question' }];
      const third = [...second, { role: 'assistant' as const, content: 'second answer' }, { role: 'user' as const, content: 'third question' }];
      server.push(textStep('first answer'), textStep('second answer'), textStep('third answer'));
      const ask = (messages: Message[], cacheBreakpoint: number | null) =>
        llm.complete(llmRequest({ systemPrompt: 'Be brief.', tools: [ECHO_TOOL], toolChoice: 'auto', messages, cacheBreakpoint }), live());
      const usages = [(await ask(first, null)).usage, (await ask(second, 1)).usage, (await ask(third, 3)).usage];
      const bodies = server.requests.map((request) => request.body!);
      expect(bodies[1]!.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'first question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'first answer', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: [{ type: 'text', text: 'second question' }] },
      ]);
      for (const body of bodies) expect(JSON.stringify(body).split('cache_control').length - 1).toBe(body === bodies[0] ? 2 : 3);
      // What the fake server's cache reported is what the adapter counts: read, write, and all three in the prompt.
      usages.forEach((usage, index) => {
        const prompt = server.promptUsage[index]!;
        expect(usage).toMatchObject({ cachedTokens: prompt.cacheReadInputTokens, cacheWriteTokens: prompt.cacheCreationInputTokens });
        expect(usage.promptTokens).toBe(prompt.inputTokens + prompt.cacheReadInputTokens + prompt.cacheCreationInputTokens);
      });
      // The first call writes tools and system; each later one reads what the one before wrote and writes up to its breakpoint.
      expect(usages.map((usage) => [usage.cachedTokens > 0, usage.cacheWriteTokens > 0])).toEqual([[false, true], [true, true], [true, true]]);
      expect(usages[1]!.cachedTokens).toBe(usages[0]!.cacheWriteTokens);
      expect(usages[2]!.cachedTokens).toBe(usages[1]!.cachedTokens + usages[1]!.cacheWriteTokens);
    });

    it('a history ending with an assistant turn (a bare resume) ends without trailing whitespace', async () => {
      server.push(textStep('continuing'));
      const history = [
        { role: 'user' as const, content: 'plan it' },
        { role: 'assistant' as const, content: 'Here is the plan:\n1. do X\n' },
      ];
      await llm.complete(llmRequest({ messages: history }), live());
      expect(server.requests[0]!.body!.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'plan it' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Here is the plan:\n1. do X' }] },
      ]);
    });

    it('sends neither tools nor tool_choice when no tools are offered', async () => {
      server.push(textStep('ok'));
      await llm.complete(llmRequest({ toolChoice: null }), live());
      expect(Object.keys(server.requests[0]!.body!).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream']);
    });

    it('honours a base URL with a path prefix', async () => {
      const proxied = anthropicLlm({ apiKey: 'sk-ant-test', baseUrl: `${server.url}/anthropic`, model: 'm', timeoutMs: 10_000 });
      server.push(textStep('ok'));
      expect((await proxied.complete(llmRequest(), live())).text).toBe('ok');
      expect(server.requests[0]!.path).toBe('/anthropic/v1/messages');
    });
  });

  describe('AnthropicLlm HTTP errors', () => {
    it.each([408, 409, 429, 500, 502, 503, 504, 529])('%s is retryable, after exactly one request', async (status) => {
      server.push(errorStep(status));
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status });
      expect((error as { headers: Headers }).headers.get('request-id')).toBe('req_fake_1');
      expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'http_status', status });
      expect(server.requests).toHaveLength(1);
    });

    it.each([400, 401, 403, 404, 413, 422])('%s is not retryable, after exactly one request', async (status) => {
      server.push(errorStep(status));
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status });
      expect(classifyLlmError(error)).toEqual({ retryable: false, reason: 'http_status', status });
      expect(server.requests).toHaveLength(1);
    });

    it.each([
      [400, false],
      [529, true],
    ])('%s whose body stalls fails at timeoutMs with its status (retryable: %s); the connection is closed', async (status, retryable) => {
      server.push(errorStep(status, { stallBody: true }));
      const quick = anthropicLlm({ apiKey: 'sk-ant-test', baseUrl: server.url, model: 'm', timeoutMs: 200 });
      const error = await quick.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status });
      expect(classifyLlmError(error)).toEqual({ retryable, reason: 'http_status', status });
      expect(await server.requests[0]!.closed).toEqual({ early: true });
    });

    it('keeps the error type and message from Anthropic’s body', async () => {
      server.push(errorStep(529, { message: 'Overloaded' }));
      const error = await llm.complete(llmRequest(), live()).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'OverloadedError', status: 529, type: 'overloaded_error', apiMessage: 'Overloaded', requestID: 'req_fake_1' });
    });

    it('honours retry-after: retryAfterMs reads it and the retry policy waits that long', async () => {
      server.push(errorStep(429, { headers: { 'retry-after': '7' } }), textStep('finally'));
      const sleeps: number[] = [];
      const clock: Clock = { now: () => 0, sleep: async (ms) => void sleeps.push(ms) };
      let first: unknown;
      const response = await runWithRetry((_attempt, signal) => llm.complete(llmRequest(), { signal }), {
        policy: resolveRetryPolicy({ maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2, totalTimeoutMs: null }),
        clock,
        random: () => 0.5,
        onAttemptFailed: (info) => (first ??= info.error),
      });
      expect(response.text).toBe('finally');
      expect(retryAfterMs(first)).toBe(7000);
      expect(sleeps).toEqual([7000]);
      expect(server.requests).toHaveLength(2);
    });
  });
});
