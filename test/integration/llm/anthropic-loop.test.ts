/**
 * End to end: the loop's `runInput` driving `AnthropicLlm` through the real SDK and the fake
 * server — a 529 retried by the loop's policy, a tool round, then the answer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../src/core/history/index.js';
import { AnthropicLlm } from '../../../src/llm/anthropic/index.js';
import { errorStep, startFakeAnthropicServer, textStep, toolStep, type FakeAnthropicServer } from '../../support/fake-anthropic-server.js';
import { LoopHarness } from '../../unit/core/loop/loop-harness.js';

const echoTool = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: (args: { text: string }) => `echo: ${args.text}`,
};

let server: FakeAnthropicServer;

beforeEach(async () => {
  server = await startFakeAnthropicServer();
});

afterEach(async () => {
  await server.close();
});

describe('runInput with AnthropicLlm', () => {
  it('retries a 529, runs a tool round and completes', async () => {
    server.push(
      errorStep(529, { message: 'Overloaded' }),
      toolStep([{ id: 'toolu_01', name: 'echo', input: { text: 'x' } }], { text: 'Echoing.' }),
      textStep(['All ', 'done.'], { usage: { inputTokens: 40, outputTokens: 2 } }),
    );
    const llm = new AnthropicLlm({ apiKey: 'sk-ant-test', baseUrl: server.url, model: 'claude-test', timeoutMs: 10_000 });
    const harness = new LoopHarness({ llm, tools: [echoTool], profile: { systemPrompt: 'You echo.' } });
    await harness.send('please echo x');

    const result = await harness.runNext();

    expect(harness.sink.ofType('agent_error')).toEqual([]);
    expect(result).toMatchObject({ status: 'completed', finalText: 'All done.', rounds: 2, toolCalls: 1 });
    expect(harness.sink.ofType('llm_retry_attempted')).toHaveLength(1);
    expect(harness.sink.ofType('stream_delta').map((event) => event.text)).toEqual(['Echoing.', 'All ', 'done.']);
    expect(server.requests).toHaveLength(3);
    expect(server.pending).toBe(0);

    const history = await harness.history();
    expect(protocolViolations(history)).toEqual([]);
    expect(history).toEqual([
      { role: 'user', content: 'please echo x' },
      { role: 'assistant', content: 'Echoing.', toolCalls: [{ id: 'toolu_01', name: 'echo', arguments: '{"text":"x"}' }] },
      { role: 'tool', toolCallId: 'toolu_01', name: 'echo', content: 'echo: x' },
      { role: 'assistant', content: 'All done.' },
    ]);

    const last = server.requests[2]!.body!;
    expect(last).toMatchObject({ model: 'claude-test', system: [{ type: 'text', text: 'You echo.', cache_control: { type: 'ephemeral' } }], tool_choice: { type: 'auto' } });
    expect(last.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'please echo x' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Echoing.' }, { type: 'tool_use', id: 'toolu_01', name: 'echo', input: { text: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'echo: x' }] },
    ]);
  });
});
