/**
 * Fallback across real SDKs (issue 4): the primary (OpenAI SDK → fake OpenAI server) fails and the
 * secondary (Anthropic SDK → fake Anthropic server) serves the call, through the loop.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicLlm } from '../../../src/llm/anthropic/index.js';
import { FallbackLlm } from '../../../src/llm/fallback-llm.js';
import { OpenAiLlm } from '../../../src/llm/openai/index.js';
import { startFakeAnthropicServer, textStep, type FakeAnthropicServer } from '../../support/fake-anthropic-server.js';
import { errorResponse, FakeOpenAiServer, textStream } from '../../support/fake-openai-server.js';
import { LoopHarness } from '../../unit/core/loop/loop-harness.js';

const openai = new FakeOpenAiServer();
let anthropic: FakeAnthropicServer;

beforeAll(async () => {
  await openai.start();
  anthropic = await startFakeAnthropicServer();
});
beforeEach(() => openai.reset());
afterAll(async () => {
  await openai.close();
  await anthropic.close();
});

function fallbackLlm(): FallbackLlm {
  return new FallbackLlm(
    [
      new OpenAiLlm({ apiKey: 'sk-expired', baseUrl: openai.url, model: 'gpt-4o-mini', timeoutMs: 10_000 }),
      new AnthropicLlm({ apiKey: 'sk-ant', baseUrl: anthropic.url, model: 'claude-test', timeoutMs: 10_000 }),
    ],
    { switchAfterFailures: 2 },
  );
}

describe('provider fallback through the loop', () => {
  it('an expired OpenAI key (401) moves the call to Anthropic at once', async () => {
    openai.enqueue(errorResponse(401, { message: 'Incorrect API key provided' }));
    anthropic.push(textStep(['served by ', 'anthropic']));
    const harness = new LoopHarness({ llm: fallbackLlm() });
    await harness.send('hello');
    const result = await harness.runNext();
    expect(result).toMatchObject({ status: 'completed', finalText: 'served by anthropic' });
    expect(openai.requests).toHaveLength(1);
    const rows = await harness.store.getUsageRounds(harness.sessionId);
    expect(rows.map((row) => `${row.provider}:${row.model}`)).toEqual(['anthropic:claude-test']);
  });

  it('a 503 storm is retried on OpenAI, then Anthropic serves', async () => {
    openai.enqueue(errorResponse(503), errorResponse(503), textStream(['never used']));
    anthropic.push(textStep('from the fallback'));
    const harness = new LoopHarness({ llm: fallbackLlm() });
    await harness.send('hello');
    const result = await harness.runNext();
    expect(result).toMatchObject({ status: 'completed', finalText: 'from the fallback' });
    expect(openai.requests).toHaveLength(2);
    expect(harness.sink.ofType('llm_retry_attempted')).toHaveLength(1);
  });
});
