import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../../../src/core/ports/llm.js';
import { DEFAULT_MAX_TOKENS, MAX_CACHE_BREAKPOINTS, structuredOutputInstruction, toAnthropicRequest } from '../../../../src/llm/anthropic/index.js';

const echo = { name: 'echo', description: 'Echo text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    sessionId: 's1',
    model: null,
    systemPrompt: 'Be brief.',
    messages: [{ role: 'user', content: 'hi' }],
    cacheBreakpoint: null,
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
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
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

  const cachedEcho = { name: 'echo', description: 'Echo text', input_schema: echo.parameters, cache_control: { type: 'ephemeral' } };
  const toolCases: [string, Partial<LlmRequest>, unknown, unknown][] = [
    ['no tools: neither tools nor tool_choice', { toolChoice: null }, undefined, undefined],
    ['no tools but auto asked: still no tool_choice', { toolChoice: 'auto' }, undefined, undefined],
    ['tools with auto', { tools: [echo], toolChoice: 'auto' }, [cachedEcho], { type: 'auto' }],
    ['tools with none (round-limit wrap-up)', { tools: [echo], toolChoice: 'none' }, [cachedEcho], { type: 'none' }],
    ['tools, choice left open', { tools: [echo], toolChoice: null }, [cachedEcho], undefined],
  ];
  it.each(toolCases)('%s', (_name, overrides, tools, toolChoice) => {
    const params = toAnthropicRequest(request(overrides), 'm');
    expect(params.tools).toEqual(tools);
    expect(params.tool_choice).toEqual(toolChoice);
  });

  it('gives every input schema type object', () => {
    const params = toAnthropicRequest(request({ tools: [{ name: 't', description: 'd', parameters: { properties: {} } }], toolChoice: 'auto' }), 'm');
    expect(params.tools).toEqual([{ name: 't', description: 'd', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } }]);
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
    const system = systemText(params);
    expect(system).toBe(`Be brief.\n\n${structuredOutputInstruction(responseFormat)}`);
    expect(system).toContain(JSON.stringify(responseFormat.schema));
    expect(system).toContain('"answer" (The answer)');
    expect(Object.keys(params).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream', 'system']);
    expect(systemText(toAnthropicRequest(request({ responseFormat, systemPrompt: null }), 'm'))).toBe(structuredOutputInstruction(responseFormat));
  });

  describe('prompt-cache breakpoints', () => {
    const history: LlmRequest['messages'] = [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'checking', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"a"}' }] },
      { role: 'tool', toolCallId: 'c1', name: 'echo', content: 'a' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second' },
    ];

    it('marks the last tool, the system prompt and the last message of the earlier inputs, and nothing else', () => {
      const params = toAnthropicRequest(request({ messages: history, cacheBreakpoint: 3, tools: [echo, { ...echo, name: 'other' }], toolChoice: 'auto' }), 'm');
      expect(params.tools!.map((tool) => 'cache_control' in tool)).toEqual([false, true]);
      expect(params.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
      expect(params.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'checking' }, { type: 'tool_use', id: 'c1', name: 'echo', input: { text: 'a' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'first answer', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: [{ type: 'text', text: 'second' }] },
      ]);
      expect(breakpoints(params)).toBe(3);
    });

    it('stays within Anthropic’s limit of four', () => {
      expect(MAX_CACHE_BREAKPOINTS).toBe(4);
      for (let at = 0; at < history.length; at += 1) {
        expect(breakpoints(toAnthropicRequest(request({ messages: history, cacheBreakpoint: at, tools: [echo], toolChoice: 'auto' }), 'm'))).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
      }
    });

    it('puts none in the messages without an earlier input, or with an index outside them', () => {
      for (const cacheBreakpoint of [null, -1, history.length, 99]) {
        const params = toAnthropicRequest(request({ messages: history, cacheBreakpoint }), 'm');
        expect(JSON.stringify(params.messages)).not.toContain('cache_control');
      }
    });

    it('marks the last block of a merged turn at the end of the earlier message, and never changes the request’s messages', () => {
      const messages: LlmRequest['messages'] = [
        { role: 'user', content: 'a' },
        { role: 'system', content: 'internal note' },
        { role: 'user', content: 'b' },
      ];
      const copy = structuredClone(messages);
      const params = toAnthropicRequest(request({ messages, cacheBreakpoint: 1 }), 'm');
      // The system message joins the system prompt: the breakpoint goes on what precedes it.
      expect(params.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'b' }] }]);
      expect(messages).toEqual(copy);
    });
  });
});

/** The text of a request's system blocks. */
function systemText(params: ReturnType<typeof toAnthropicRequest>): string | undefined {
  const system = params.system;
  return typeof system === 'string' || system === undefined ? system : system.map((block) => block.text).join('');
}

/** How many `cache_control` breakpoints a request carries. */
function breakpoints(params: ReturnType<typeof toAnthropicRequest>): number {
  return JSON.stringify(params).split('"cache_control"').length - 1;
}
