import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/core/messages.js';
import type { LlmRequest } from '../../../src/core/ports/llm.js';
import { offlineReply } from '../../../src/llm/offline-reply.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { echoTool, LoopHarness, runChecked } from '../core/loop/loop-harness.js';

/**
 * The offline model's convention (docs/llm-providers.md, "Offline model"): plain text is echoed;
 * `/tool <name> <JSON>` calls that tool, then answers with its result.
 */
function request(messages: Message[], toolChoice: LlmRequest['toolChoice'] = 'auto'): LlmRequest {
  return { sessionId: 's', model: null, systemPrompt: null, messages, cacheBreakpoint: null, tools: [], toolChoice, maxTokens: null, temperature: null, responseFormat: null };
}

const user = (content: string): Message => ({ role: 'user', content });

describe('offlineReply', () => {
  it('echoes plain text, unchanged', () => {
    expect(offlineReply(request([user('hello')]))).toEqual({ text: 'Echo: hello' });
    expect(offlineReply(request([user('  /toolbox ')]))).toEqual({ text: 'Echo:   /toolbox ' });
    expect(offlineReply(request([]))).toEqual({ text: 'Hello from the scripted model.' });
  });

  it('calls the tool a /tool input names, with its arguments text as given ({} when none)', () => {
    expect(offlineReply(request([user('/tool get_weather {"city":"Paris"}')]))).toEqual({ toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    expect(offlineReply(request([user(' /tool current_time ')]))).toEqual({ toolCalls: [{ name: 'current_time', arguments: '{}' }] });
    expect(offlineReply(request([user('/tool get_weather not json')]))).toEqual({ toolCalls: [{ name: 'get_weather', arguments: 'not json' }] });
  });

  it('answers with the tool results that came after the command', () => {
    const messages: Message[] = [
      user('/tool get_weather {"city":"Paris"}'),
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', toolCallId: 'c1', name: 'get_weather', content: '{"city":"Paris","temperature":18}' },
    ];
    expect(offlineReply(request(messages))).toEqual({ text: 'get_weather returned: {"city":"Paris","temperature":18}' });
  });

  it('does not call a tool when the call may not use tools', () => {
    expect(offlineReply(request([user('/tool echo {}')], 'none'))).toEqual({ text: 'Echo: /tool echo {}' });
    expect(offlineReply(request([user('/tool echo {}')], null))).toEqual({ text: 'Echo: /tool echo {}' });
  });
});

describe('the offline model in the loop', () => {
  const offline = () => new ScriptedLlm([], { whenExhausted: 'echo' });

  it('runs the named tool and completes with its result', async () => {
    const harness = new LoopHarness({ llm: offline(), tools: [echoTool as never] });
    await harness.send('/tool echo {"text":"hi"}');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'echo returned: echo: hi', toolCalls: 1 });
    expect(harness.sink.ofType('tool_call_completed')).toMatchObject([{ name: 'echo', failed: false }]);
  });

  it('bad arguments reach the model as the tool\'s error result, and it says so', async () => {
    const harness = new LoopHarness({ llm: offline(), tools: [echoTool as never] });
    await harness.send('/tool echo {"text":42}');
    const result = await runChecked(harness);
    expect(result?.finalText).toMatch(/^echo returned: Error: invalid arguments for tool "echo": \/text must be string/);
    expect(harness.sink.ofType('tool_call_failed')[0]).toMatchObject({ name: 'echo', errorCode: 'tool.invalid_args' });
  });

  it('an unknown tool is answered with the tools there are', async () => {
    const harness = new LoopHarness({ llm: offline(), tools: [echoTool as never] });
    await harness.send('/tool teleport');
    const result = await runChecked(harness);
    expect(result?.finalText).toMatch(/^teleport returned: Error: unknown tool "teleport". Available tools: echo/);
  });

  it('the next plain input is echoed again', async () => {
    const harness = new LoopHarness({ llm: offline(), tools: [echoTool as never] });
    await harness.send('/tool echo {"text":"hi"}');
    await runChecked(harness);
    await harness.send('thanks');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'Echo: thanks' });
  });
});
