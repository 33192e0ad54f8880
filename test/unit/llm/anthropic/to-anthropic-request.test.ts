import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../../../src/core/ports/llm.js';
import { DEFAULT_MAX_TOKENS, structuredOutputInstruction, toAnthropicRequest } from '../../../../src/llm/anthropic/index.js';

const echo = { name: 'echo', description: 'Echo text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: null,
    systemPrompt: 'Be brief.',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    toolChoice: null,
    maxTokens: null,
    temperature: null,
    responseFormat: null,
    ...overrides,
  };
}

describe('toAnthropicRequest', () => {
  it('builds a streaming request with the defaults', () => {
    expect(toAnthropicRequest(request(), 'claude-default')).toEqual({
      model: 'claude-default',
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      stream: true,
      system: 'Be brief.',
    });
  });

  it('uses the request model and max tokens, and never sends temperature (API 2026-10-21 rejects it)', () => {
    const params = toAnthropicRequest(request({ model: 'claude-x', maxTokens: 123, temperature: 0.2 }), 'claude-default');
    expect(params).toMatchObject({ model: 'claude-x', max_tokens: 123 });
    expect(params).not.toHaveProperty('temperature');
  });

  it('leaves system out when there is none', () => {
    expect(toAnthropicRequest(request({ systemPrompt: null }), 'm')).not.toHaveProperty('system');
  });

  const toolCases: [string, Partial<LlmRequest>, unknown, unknown][] = [
    ['no tools: neither tools nor tool_choice', { toolChoice: null }, undefined, undefined],
    ['no tools but auto asked: still no tool_choice', { toolChoice: 'auto' }, undefined, undefined],
    ['tools with auto', { tools: [echo], toolChoice: 'auto' }, [{ name: 'echo', description: 'Echo text', input_schema: echo.parameters }], { type: 'auto' }],
    ['tools with none (round-limit wrap-up)', { tools: [echo], toolChoice: 'none' }, [{ name: 'echo', description: 'Echo text', input_schema: echo.parameters }], { type: 'none' }],
    ['tools, choice left open', { tools: [echo], toolChoice: null }, [{ name: 'echo', description: 'Echo text', input_schema: echo.parameters }], undefined],
  ];
  it.each(toolCases)('%s', (_name, overrides, tools, toolChoice) => {
    const params = toAnthropicRequest(request(overrides), 'm');
    expect(params.tools).toEqual(tools);
    expect(params.tool_choice).toEqual(toolChoice);
  });

  it('gives every input schema type object', () => {
    const params = toAnthropicRequest(request({ tools: [{ name: 't', description: 'd', parameters: { properties: {} } }], toolChoice: 'auto' }), 'm');
    expect(params.tools).toEqual([{ name: 't', description: 'd', input_schema: { type: 'object', properties: {} } }]);
  });

  it('renders tool history as text when no tools are offered', () => {
    const messages: LlmRequest['messages'] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', name: 'echo', content: 'r' },
    ];
    const withoutTools = JSON.stringify(toAnthropicRequest(request({ messages }), 'm'));
    expect(withoutTools).not.toContain('tool_use');
    expect(withoutTools).not.toContain('tool_result');
    const withTools = toAnthropicRequest(request({ messages, tools: [echo], toolChoice: 'auto' }), 'm');
    expect(withTools.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'echo', input: {} }] });
  });

  it('asks for structured output in the system prompt, not with an unsupported parameter', () => {
    const responseFormat = { name: 'answer', description: 'The answer', schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } };
    const params = toAnthropicRequest(request({ responseFormat }), 'm');
    expect(params.system).toBe(`Be brief.\n\n${structuredOutputInstruction(responseFormat)}`);
    expect(params.system).toContain(JSON.stringify(responseFormat.schema));
    expect(params.system).toContain('"answer" (The answer)');
    expect(Object.keys(params).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream', 'system']);
    expect(toAnthropicRequest(request({ responseFormat, systemPrompt: null }), 'm').system).toBe(structuredOutputInstruction(responseFormat));
  });
});
