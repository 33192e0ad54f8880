import { describe, expect, it } from 'vitest';
import { CancelledError, ConfigInvalidError } from '../../../../src/core/errors/index.js';
import { AnthropicLlm, type AnthropicLlmOptions } from '../../../../src/llm/anthropic/index.js';

const valid: AnthropicLlmOptions = { apiKey: 'sk-ant', baseUrl: null, model: 'claude-x', timeoutMs: 60_000 };

describe('AnthropicLlm options', () => {
  it('accepts valid options and names itself', () => {
    const llm = new AnthropicLlm({ ...valid, baseUrl: 'http://127.0.0.1:1' });
    expect(llm).toMatchObject({ provider: 'anthropic', model: 'claude-x' });
  });

  it.each<[string, Partial<AnthropicLlmOptions>, RegExp]>([
    ['an empty key', { apiKey: '' }, /apiKey/],
    ['an empty model', { model: '' }, /model/],
    ['a zero timeout', { timeoutMs: 0 }, /timeoutMs/],
    ['a fractional timeout', { timeoutMs: 1.5 }, /timeoutMs/],
    ['a relative base URL', { baseUrl: 'localhost:8080' }, /baseUrl/],
  ])('refuses %s with config.invalid', (_name, override, message) => {
    const create = () => new AnthropicLlm({ ...valid, ...override });
    expect(create).toThrow(ConfigInvalidError);
    expect(create).toThrow(message);
  });

  it('rejects with the reason of an already aborted signal, before any request', async () => {
    // Port 9 (discard) on loopback: nothing listens there, so a request would fail differently.
    const llm = new AnthropicLlm({ ...valid, baseUrl: 'http://127.0.0.1:9' });
    const controller = new AbortController();
    const reason = new CancelledError('stop');
    controller.abort(reason);
    const request = { sessionId: 's1', model: null, systemPrompt: null, messages: [], cacheBreakpoint: null, tools: [], toolChoice: null, maxTokens: null, temperature: null, responseFormat: null };
    await expect(llm.complete(request, { signal: controller.signal })).rejects.toBe(reason);
  });
});
