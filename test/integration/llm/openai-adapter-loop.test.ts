/**
 * The loop end to end over the OpenAI adapter: `runInput` (through the unit tests' `LoopHarness`,
 * in-memory store) drives the real SDK against the fake server.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiLlm } from '../../../src/llm/openai/index.js';
import { errorResponse, FakeOpenAiServer, textStream, toolCallEvents, usageBody } from '../../support/fake-openai-server.js';
import { LoopHarness } from '../../unit/core/loop/loop-harness.js';
import { openAiMessageViolations } from '../../unit/llm/openai/openai-message-rules.js';

const server = new FakeOpenAiServer();

const echoTool = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: (args: { text: string }) => `echo: ${args.text}`,
};

function harness(): LoopHarness {
  const llm = new OpenAiLlm({ apiKey: 'sk-loop', baseUrl: server.url, model: 'gpt-4o-mini', timeoutMs: 10_000 });
  return new LoopHarness({ llm, tools: [echoTool] });
}

beforeAll(async () => {
  await server.start();
});
beforeEach(() => server.reset());
afterAll(() => server.close());

describe('runInput over OpenAiLlm', () => {
  it('completes a tool round: call, result, answer — each request valid for the API', async () => {
    server.enqueue(
      { kind: 'stream', events: toolCallEvents([{ id: 'call_echo1', name: 'echo', arguments: '{"text":"ping"}' }], { pieces: 4 }), usage: usageBody({ prompt: 50, completion: 10 }) },
      textStream(['The tool ', 'said: echo: ping'], { usage: usageBody({ prompt: 80, completion: 8, cached: 40 }) }),
    );
    const loop = harness();
    await loop.send('please echo ping');
    const result = await loop.runNext();

    expect(loop.sink.ofType('agent_error')).toEqual([]);
    expect(result).toMatchObject({ status: 'completed', finalText: 'The tool said: echo: ping', rounds: 2, toolCalls: 1 });
    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]!.body.messages as ChatCompletionMessageParam[];
    expect(openAiMessageViolations(server.requests[0]!.body.messages as ChatCompletionMessageParam[])).toEqual([]);
    expect(openAiMessageViolations(second)).toEqual([]);
    expect(second.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_echo1', type: 'function', function: { name: 'echo', arguments: '{"text":"ping"}' } }] },
      { role: 'tool', tool_call_id: 'call_echo1', content: 'echo: ping' },
    ]);
    expect(server.requests[0]!.body).toMatchObject({ tool_choice: 'auto', stream_options: { include_usage: true } });
    expect(loop.sink.ofType('stream_delta').map((event) => event.text)).toEqual(['The tool ', 'said: echo: ping']);
    expect(await loop.history()).toEqual([
      { role: 'user', content: 'please echo ping' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_echo1', name: 'echo', arguments: '{"text":"ping"}' }] },
      { role: 'tool', toolCallId: 'call_echo1', name: 'echo', content: 'echo: ping' },
      { role: 'assistant', content: 'The tool said: echo: ping' },
    ]);
  });

  it('retries a 503 through the loop policy, over the real SDK (one HTTP request per attempt)', async () => {
    server.enqueue(errorResponse(503, { headers: { 'retry-after-ms': '1' } }), textStream(['recovered']));
    const loop = harness();
    await loop.send('hello');
    const result = await loop.runNext();

    expect(result).toMatchObject({ status: 'completed', finalText: 'recovered' });
    expect(server.requests).toHaveLength(2);
    expect(loop.sink.ofType('llm_retry_attempted')).toHaveLength(1);
    expect(loop.sink.ofType('llm_call_completed').map((event) => event.success)).toEqual([false, true]);
  });

  it('a mid-stream disconnect is retried; the partial text is discarded', async () => {
    server.enqueue(textStream(['Partial ', 'answ'], { cut: { afterEvents: 2, how: 'destroy' } }), textStream(['Whole answer.']));
    const loop = harness();
    await loop.send('hello');
    const result = await loop.runNext();

    expect(result).toMatchObject({ status: 'completed', finalText: 'Whole answer.' });
    expect(loop.sink.ofType('stream_discarded')).toHaveLength(1);
    expect(await loop.history()).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'Whole answer.' },
    ]);
  });

  it('a 401 is not retried: one request, the run degrades', async () => {
    server.enqueue(errorResponse(401, { message: 'Incorrect API key provided' }));
    const loop = harness();
    await loop.send('hello');
    const result = await loop.runNext();

    expect(server.requests).toHaveLength(1);
    expect(result).toMatchObject({ status: 'degraded' });
    expect(loop.sink.ofType('llm_degraded')).toMatchObject([{ reason: 'non_retryable' }]);
  });
});
