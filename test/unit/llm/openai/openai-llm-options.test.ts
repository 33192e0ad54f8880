import { describe, expect, it } from 'vitest';
import { CancelledError, ConfigInvalidError } from '../../../../src/core/errors/index.js';
import { OpenAiLlm } from '../../../../src/llm/openai/openai-llm.js';

describe('OpenAiLlm options', () => {
  const valid = { apiKey: 'sk-test', baseUrl: null, model: 'gpt-4o-mini', timeoutMs: 1000 };
  const invalid: [string, Record<string, unknown>][] = [
    ['empty api key', { apiKey: '' }],
    ['empty model', { model: '' }],
    ['zero timeout', { timeoutMs: 0 }],
    ['fractional timeout', { timeoutMs: 1.5 }],
    ['relative base URL', { baseUrl: '/v1' }],
  ];
  it.each(invalid)('%s → ConfigInvalidError', (_name, overrides) => {
    expect(() => new OpenAiLlm({ ...valid, ...overrides } as never)).toThrow(ConfigInvalidError);
  });

  it('exposes provider and default model', () => {
    const llm = new OpenAiLlm(valid);
    expect(llm.provider).toBe('openai');
    expect(llm.model).toBe('gpt-4o-mini');
  });

  it('an already aborted signal rejects before any request', async () => {
    let fetched = 0;
    const llm = new OpenAiLlm({ ...valid, fetch: async () => (fetched++, new Response('')) });
    const controller = new AbortController();
    const reason = new CancelledError('stop');
    controller.abort(reason);
    const request = { sessionId: 's1', model: null, systemPrompt: null, messages: [], cacheBreakpoint: null, tools: [], toolChoice: null, maxTokens: null, temperature: null, responseFormat: null };
    await expect(llm.complete(request, { signal: controller.signal })).rejects.toBe(reason);
    expect(fetched).toBe(0);
  });
});
