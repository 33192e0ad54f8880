import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../../src/core/errors/index.js';
import type { LlmFallbackInfo, LlmRequest } from '../../../src/core/ports/llm.js';
import { FallbackLlm } from '../../../src/llm/fallback-llm.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';

const request: LlmRequest = {
  sessionId: 's1',
  model: null,
  systemPrompt: null,
  messages: [{ role: 'user', content: 'hi' }],
  cacheBreakpoint: null,
  tools: [],
  toolChoice: null,
  maxTokens: null,
  temperature: null,
  responseFormat: null,
};

const httpError = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });

function manualNow() {
  let now = 1_000;
  return { clock: { now: () => now, sleep: async () => {} }, advance: (ms: number) => (now += ms) };
}

describe('FallbackLlm', () => {
  it('serves from the primary while it is healthy, with its own model', async () => {
    const primary = new ScriptedLlm([{ text: 'from primary' }], { model: 'gpt-x' });
    const llm = new FallbackLlm([primary, new ScriptedLlm([], { model: 'claude-y' })]);
    const response = await llm.complete(request, { signal: new AbortController().signal });
    expect(response.text).toBe('from primary');
    expect(primary.requests[0]!.model).toBe('gpt-x');
    expect(llm.labels).toEqual(['scripted:gpt-x', 'scripted:claude-y']);
  });

  it("sends an input's model override to the primary only: each fallback pair keeps its own model", async () => {
    const primary = new ScriptedLlm([{ error: httpError(401) }], { model: 'gpt-x' });
    const fallback = new ScriptedLlm([{ text: 'from fallback' }], { model: 'claude-y' });
    const llm = new FallbackLlm([primary, fallback]);
    await llm.complete(Object.assign({}, request, { model: 'gpt-x-large' }), { signal: new AbortController().signal });
    expect(primary.requests[0]!.model).toBe('gpt-x-large');
    expect(fallback.requests[0]!.model).toBe('claude-y');
  });

  it('moves a call to the next provider at once on a non-retryable error (expired key)', async () => {
    const switches: LlmFallbackInfo[] = [];
    const llm = new FallbackLlm([new ScriptedLlm([{ error: httpError(401) }], { model: 'a' }), new ScriptedLlm([{ text: 'from b' }], { model: 'b' })]);
    const response = await llm.complete(request, { signal: new AbortController().signal, handlers: { onFallback: (info) => switches.push(info) } });
    expect(response.text).toBe('from b');
    expect(switches).toEqual([{ from: 'scripted:a', to: 'scripted:b', reason: 'non_retryable', errorMessage: 'HTTP 401' }]);
  });

  it('leaves a retryable failure to the retry policy, then switches after repeated failures', async () => {
    const { clock } = manualNow();
    const primary = new ScriptedLlm([{ error: httpError(429) }, { error: httpError(429) }], { model: 'a' });
    const secondary = new ScriptedLlm([{ text: 'from b' }], { model: 'b' });
    const llm = new FallbackLlm([primary, secondary], { switchAfterFailures: 2, clock });
    const signal = new AbortController().signal;
    await expect(llm.complete(request, { signal })).rejects.toMatchObject({ status: 429 });
    const switches: LlmFallbackInfo[] = [];
    const response = await llm.complete(request, { signal, handlers: { onFallback: (info) => switches.push(info) } });
    expect(response.text).toBe('from b');
    expect(switches[0]).toMatchObject({ reason: 'unavailable', from: 'scripted:a', to: 'scripted:b' });
    expect(llm.model).toBe('b');
  });

  it.each([400, 413, 422])('a request-specific %i moves this call on without benching the provider', async (status) => {
    const primary = new ScriptedLlm([{ error: httpError(status) }, { text: 'primary again' }], { model: 'a' });
    const switches: LlmFallbackInfo[] = [];
    const llm = new FallbackLlm([primary, new ScriptedLlm([{ text: 'b served the big one' }], { model: 'b' })]);
    const signal = new AbortController().signal;
    expect((await llm.complete(request, { signal, handlers: { onFallback: (info) => switches.push(info) } })).text).toBe('b served the big one');
    expect(switches).toMatchObject([{ from: 'scripted:a', to: 'scripted:b', reason: 'non_retryable' }]);
    expect(llm.model).toBe('a');
    expect((await llm.complete(request, { signal })).text).toBe('primary again');
  });

  it.each([401, 402, 403, 404])('a provider-wide %i benches the provider', async (status) => {
    const llm = new FallbackLlm([new ScriptedLlm([{ error: httpError(status) }], { model: 'a' }), new ScriptedLlm([{ text: 'b1' }, { text: 'b2' }], { model: 'b' })]);
    const signal = new AbortController().signal;
    expect((await llm.complete(request, { signal })).text).toBe('b1');
    expect(llm.model).toBe('b');
    expect((await llm.complete(request, { signal })).text).toBe('b2');
  });

  it('tries the primary first again once its cooldown has passed', async () => {
    const { clock, advance } = manualNow();
    const primary = new ScriptedLlm([{ error: httpError(404) }, { text: 'primary is back' }], { model: 'a' });
    const llm = new FallbackLlm([primary, new ScriptedLlm([{ text: 'b1' }, { text: 'b2' }], { model: 'b' })], { cooldownMs: 5_000, clock });
    const signal = new AbortController().signal;
    expect((await llm.complete(request, { signal })).text).toBe('b1');
    expect((await llm.complete(request, { signal })).text).toBe('b2');
    advance(5_000);
    expect((await llm.complete(request, { signal })).text).toBe('primary is back');
  });

  it('throws the last error when every provider fails, and never falls back on cancellation', async () => {
    const llm = new FallbackLlm([new ScriptedLlm([{ error: httpError(401) }]), new ScriptedLlm([{ error: httpError(403) }])]);
    await expect(llm.complete(request, { signal: new AbortController().signal })).rejects.toMatchObject({ status: 403 });
    const secondary = new ScriptedLlm([{ text: 'never' }]);
    const cancelling = new FallbackLlm([new ScriptedLlm([{ error: new CancelledError('stop') }]), secondary]);
    await expect(cancelling.complete(request, { signal: new AbortController().signal })).rejects.toBeInstanceOf(CancelledError);
    expect(secondary.requests).toHaveLength(0);
  });
});
