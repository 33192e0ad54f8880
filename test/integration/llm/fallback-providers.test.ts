/**
 * Fallback across real SDKs (issue 4): the primary (OpenAI SDK → fake OpenAI server) fails and the
 * secondary (Anthropic SDK → fake Anthropic server) serves the call, through the loop.
 */
import { describe, expect, it } from 'vitest';
import type { LlmFallbackInfo } from '../../../src/core/ports/llm.js';
import { AnthropicLlm } from '../../../src/llm/anthropic/index.js';
import { FallbackLlm } from '../../../src/llm/fallback-llm.js';
import { OpenAiLlm } from '../../../src/llm/openai/index.js';
import { textStep } from '../../support/fake-anthropic-server.js';
import { llmRequest } from '../../support/fake-openai/llm-request.js';
import { errorResponse, textStream } from '../../support/fake-openai-server.js';
import { LoopHarness } from '../../unit/core/loop/loop-harness.js';
import { useFakeProviderServers } from './fake-provider-servers.js';

const servers = useFakeProviderServers();
const { openai } = servers;
const live = () => new AbortController().signal;

function fallbackLlm(): FallbackLlm {
  return new FallbackLlm(
    [
      new OpenAiLlm({ apiKey: 'sk-expired', baseUrl: openai.url, model: 'gpt-4o-mini', timeoutMs: 10_000 }),
      new AnthropicLlm({ apiKey: 'sk-ant', baseUrl: servers.anthropic.url, model: 'claude-test', timeoutMs: 10_000 }),
    ],
    { switchAfterFailures: 2 },
  );
}

describe('provider fallback through the loop', () => {
  it('an expired OpenAI key (401) moves the call to Anthropic at once', async () => {
    openai.enqueue(errorResponse(401, { message: 'Incorrect API key provided' }));
    servers.anthropic.push(textStep(['served by ', 'anthropic']));
    const harness = new LoopHarness({ llm: fallbackLlm() });
    await harness.send('hello');
    const result = await harness.runNext();
    expect(result).toMatchObject({ status: 'completed', finalText: 'served by anthropic' });
    expect(openai.requests).toHaveLength(1);
    const rows = await harness.store.getUsageRounds(harness.sessionId);
    expect(rows.map((row) => `${row.provider}:${row.model}`)).toEqual(['anthropic:claude-test']);
  });

  it('a request-specific 400 (context too long) goes to Anthropic for that call only; OpenAI serves the next', async () => {
    openai.enqueue(
      errorResponse(400, { message: "This model's maximum context length is 128000 tokens", param: 'messages' }),
      textStream(['from openai']),
    );
    servers.anthropic.push(textStep('the long one, from anthropic'));
    const llm = fallbackLlm();
    const switches: LlmFallbackInfo[] = [];
    const first = await llm.complete(llmRequest({ messages: [{ role: 'user', content: 'a huge prompt' }] }), { signal: live(), handlers: { onFallback: (info) => switches.push(info) } });
    expect(first).toMatchObject({ provider: 'anthropic', text: 'the long one, from anthropic' });
    expect(switches).toMatchObject([{ from: 'openai:gpt-4o-mini', to: 'anthropic:claude-test', reason: 'non_retryable' }]);
    expect(llm.provider).toBe('openai');
    const second = await llm.complete(llmRequest(), { signal: live() });
    expect(second).toMatchObject({ provider: 'openai', text: 'from openai' });
    expect(openai.requests).toHaveLength(2);
  });

  it('a 503 storm is retried on OpenAI, then Anthropic serves', async () => {
    openai.enqueue(errorResponse(503), errorResponse(503), textStream(['never used']));
    servers.anthropic.push(textStep('from the fallback'));
    const harness = new LoopHarness({ llm: fallbackLlm() });
    await harness.send('hello');
    const result = await harness.runNext();
    expect(result).toMatchObject({ status: 'completed', finalText: 'from the fallback' });
    expect(openai.requests).toHaveLength(2);
    expect(harness.sink.ofType('llm_retry_attempted')).toHaveLength(1);
  });
});
