import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../../../src/core/ports/llm.js';
import { maxTokensParamFor, toOpenAiRequest } from '../../../../src/llm/openai/to-openai-request.js';

const tool = { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    sessionId: 's1',
    model: null,
    systemPrompt: 'sys',
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

describe('toOpenAiRequest', () => {
  it('a minimal request: default model, messages, streaming with usage, the session as cache key, nothing else', () => {
    expect(toOpenAiRequest(request(), { defaultModel: 'gpt-4o-mini' })).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      prompt_cache_key: 's1',
    });
  });

  it('routes every call of a session to its prompt cache: prompt_cache_key is the session id', () => {
    expect(toOpenAiRequest(request({ sessionId: 'chat:42' }), { defaultModel: 'm' }).prompt_cache_key).toBe('chat:42');
  });

  it('leaves prompt_cache_key out when turned off (OPENAI_PROMPT_CACHE_KEY=false), for endpoints that refuse unknown fields', () => {
    expect(toOpenAiRequest(request({ sessionId: 'chat:42' }), { defaultModel: 'm', promptCacheKey: false })).not.toHaveProperty('prompt_cache_key');
  });

  it('the request model overrides the default', () => {
    expect(toOpenAiRequest(request({ model: 'gpt-4.1' }), { defaultModel: 'gpt-4o-mini' }).model).toBe('gpt-4.1');
  });

  const toolCases: [string, Partial<LlmRequest>, Record<string, unknown>][] = [
    ['tools with auto', { tools: [tool], toolChoice: 'auto' }, { tool_choice: 'auto' }],
    ['tools with none (wrap-up)', { tools: [tool], toolChoice: 'none' }, { tool_choice: 'none' }],
    ['tools with no choice: the API default', { tools: [tool], toolChoice: null }, {}],
  ];
  it.each(toolCases)('%s', (_name, overrides, expected) => {
    const params = toOpenAiRequest(request(overrides), { defaultModel: 'm' });
    expect(params.tools).toEqual([{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: tool.parameters } }]);
    expect('tool_choice' in params).toBe('tool_choice' in expected);
    if ('tool_choice' in expected) expect(params.tool_choice).toBe(expected.tool_choice);
  });

  it.each(['auto', 'none', null] as const)('no tools: neither tools nor tool_choice, whatever the choice (%s)', (toolChoice) => {
    const params = toOpenAiRequest(request({ toolChoice }), { defaultModel: 'm' });
    expect('tools' in params).toBe(false);
    expect('tool_choice' in params).toBe(false);
  });

  it('max_tokens by default, max_completion_tokens when asked; absent when null', () => {
    expect(toOpenAiRequest(request({ maxTokens: 800 }), { defaultModel: 'm' })).toMatchObject({ max_tokens: 800 });
    const modern = toOpenAiRequest(request({ maxTokens: 800 }), { defaultModel: 'm', maxTokensParam: 'max_completion_tokens' });
    expect(modern).toMatchObject({ max_completion_tokens: 800 });
    expect('max_tokens' in modern).toBe(false);
    const none = toOpenAiRequest(request(), { defaultModel: 'm' });
    expect('max_tokens' in none || 'max_completion_tokens' in none).toBe(false);
  });

  it.each([
    ['o1', 'max_completion_tokens'],
    ['o3-mini', 'max_completion_tokens'],
    ['o4-mini-2025-04-16', 'max_completion_tokens'],
    ['gpt-5', 'max_completion_tokens'],
    ['gpt-5-mini', 'max_completion_tokens'],
    ['gpt-4o', 'max_tokens'],
    ['gpt-4.1-mini', 'max_tokens'],
    ['llama3.1:8b', 'max_tokens'],
    ['openai/o3', 'max_tokens'],
  ] as const)('by default the token cap of a request sent to %s is %s (OpenAI reasoning models refuse max_tokens)', (model, field) => {
    const params = toOpenAiRequest(request({ model, maxTokens: 800 }), { defaultModel: 'gpt-4o-mini' });
    expect(params).toMatchObject({ [field]: 800 });
    expect(Object.keys(params).filter((key) => key.startsWith('max_'))).toEqual([field]);
    expect(maxTokensParamFor(model)).toBe(field);
  });

  it('the configured token-cap field wins over the model name', () => {
    const params = toOpenAiRequest(request({ model: 'o3', maxTokens: 800 }), { defaultModel: 'm', maxTokensParam: 'max_tokens' });
    expect(params).toMatchObject({ max_tokens: 800 });
    expect('max_completion_tokens' in params).toBe(false);
  });

  it('temperature when set, including 0', () => {
    expect(toOpenAiRequest(request({ temperature: 0 }), { defaultModel: 'm' }).temperature).toBe(0);
    expect(toOpenAiRequest(request({ temperature: 0.7 }), { defaultModel: 'm' }).temperature).toBe(0.7);
    expect('temperature' in toOpenAiRequest(request(), { defaultModel: 'm' })).toBe(false);
  });

  it('response_format as json_schema; strict defaults to true; description when given', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    expect(toOpenAiRequest(request({ responseFormat: { name: 'answer', schema } }), { defaultModel: 'm' }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema, strict: true },
    });
    expect(toOpenAiRequest(request({ responseFormat: { name: 'answer', schema, strict: false, description: 'The answer' } }), { defaultModel: 'm' }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema, strict: false, description: 'The answer' },
    });
    expect('response_format' in toOpenAiRequest(request(), { defaultModel: 'm' })).toBe(false);
  });

  it('the body is plain JSON (what goes over the wire is what was built)', () => {
    const params = toOpenAiRequest(request({ tools: [tool], toolChoice: 'auto', maxTokens: 5, temperature: 0 }), { defaultModel: 'm' });
    expect(JSON.parse(JSON.stringify(params))).toEqual(params);
  });
});
