/**
 * Prompt caching through a real worker (real Postgres and Redis) and the real SDKs against the fake
 * provider servers: what the requests carry (Anthropic's `cache_control` breakpoints, OpenAI's
 * `prompt_cache_key`), and where the cache reads and writes the server reports are counted — usage
 * rows, the input's result and `input_finished`, the session's stats, the worker's metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { startFakeAnthropicServer, textStep, type FakeAnthropicServer } from '../../support/fake-anthropic-server.js';
import { FakeOpenAiServer, textStream, usageBody } from '../../support/fake-openai-server.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { metricSample, sessionEvents } from './fixtures/fleet-helpers.js';

const EPHEMERAL = { type: 'ephemeral' };

/** Sends `texts` to a session one after the other, each after the one before has finished. */
async function converse(fleet: FleetFixture, sessionId: string, texts: string[]): Promise<void> {
  for (const [index, input] of texts.entries()) {
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input } });
    await fleet.waitForSessionFinished(sessionId, index + 1);
  }
}

/** The `usage` of each `input_finished` on the session's stream, by input seq. */
async function finishedUsage(fleet: FleetFixture, sessionId: string): Promise<Record<string, number>[]> {
  const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
  return events.filter((event) => event.type === 'input_finished').map((event) => event.data.usage as Record<string, number>);
}

/** The worker's `/metrics` text. */
async function metrics(worker: RunningWorker): Promise<string> {
  return (await fetch(`http://127.0.0.1:${String(worker.healthPort)}/metrics`)).text();
}

describe('prompt caching with Anthropic', () => {
  let server: FakeAnthropicServer;
  let fleet: FleetFixture;
  let worker: RunningWorker;
  const sessionId = 'cache-anthropic';

  beforeAll(async () => {
    server = await startFakeAnthropicServer();
    fleet = await FleetFixture.create('prompt_cache_a', { LLM_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: server.url, LLM_MODEL: 'claude-test' });
    worker = await fleet.startWorker({ healthServer: true });
    await fleet.store.createSession({ id: sessionId, systemPrompt: 'You answer briefly.' });
    server.push(textStep('First answer.'), textStep('Second answer.'));
    await converse(fleet, sessionId, ['first question', 'second question']);
  });

  afterAll(async () => {
    await fleet?.close();
    await server?.close();
  });

  it('sends the second input with breakpoints on the same prefix as the first: the last tool, the system prompt, the first input’s last message', () => {
    const [first, second] = server.requests.map((request) => request.body!);
    expect(server.requests).toHaveLength(2);
    for (const body of [first!, second!]) {
      const tools = body.tools as Record<string, unknown>[];
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.at(-1)!.cache_control).toEqual(EPHEMERAL);
      expect(tools.slice(0, -1).some((tool) => 'cache_control' in tool)).toBe(false);
      expect(body.system).toEqual([{ type: 'text', text: 'You answer briefly.', cache_control: EPHEMERAL }]);
    }
    // The same tools and system, so the prefix the first call wrote is the one the second reads.
    expect(second!.tools).toEqual(first!.tools);
    expect(first!.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'first question' }] }]);
    expect(second!.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'first question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer.', cache_control: EPHEMERAL }] },
      { role: 'user', content: [{ type: 'text', text: 'second question' }] },
    ]);
    for (const body of [first!, second!]) expect(JSON.stringify(body).split('"cache_control"').length - 1).toBeLessThanOrEqual(4);
  });

  it('counts the first input’s cache write and the second’s cache read in input_finished, the results, the usage rows and the stats', async () => {
    const [first, second] = server.promptUsage;
    expect(first!.cacheReadInputTokens).toBe(0);
    expect(first!.cacheCreationInputTokens).toBeGreaterThan(0);
    expect(second!.cacheReadInputTokens).toBe(first!.cacheCreationInputTokens);
    expect(second!.cacheCreationInputTokens).toBeGreaterThan(0);

    const finished = await finishedUsage(fleet, sessionId);
    expect(finished).toHaveLength(2);
    expect(finished[0]).toMatchObject({ cachedTokens: 0, cacheWriteTokens: first!.cacheCreationInputTokens });
    expect(finished[1]).toMatchObject({ cachedTokens: second!.cacheReadInputTokens, cacheWriteTokens: second!.cacheCreationInputTokens });
    const prompt = (usage: typeof first) => usage!.inputTokens + usage!.cacheReadInputTokens + usage!.cacheCreationInputTokens;
    expect(finished.map((usage) => usage.promptTokens)).toEqual([prompt(first), prompt(second)]);

    const results = await fleet.store.listInputs(sessionId, { limit: 10 });
    expect(results.map((input) => input.result?.usage)).toEqual(finished);
    const rows = [...(await fleet.store.getUsageRounds(sessionId, 1)), ...(await fleet.store.getUsageRounds(sessionId, 2))];
    expect(rows.map((row) => [row.inputSeq, row.cachedTokens, row.cacheWriteTokens])).toEqual([
      [1, 0, first!.cacheCreationInputTokens],
      [2, second!.cacheReadInputTokens, second!.cacheCreationInputTokens],
    ]);
    const stats = (await fleet.store.getSession(sessionId))!.stats;
    expect(stats).toMatchObject({ cachedTokens: second!.cacheReadInputTokens, cacheWriteTokens: first!.cacheCreationInputTokens + second!.cacheCreationInputTokens });
  });

  it('shows them in the tokens counter as kind="cache_read" and kind="cache_write"', async () => {
    const [first, second] = server.promptUsage;
    const labels = { queue: fleet.config.queueName, provider: 'anthropic', model: 'claude-test' };
    const text = await metrics(worker);
    expect(metricSample(text, 'loopfleet_llm_tokens_total', { ...labels, kind: 'cache_read' })).toBe(second!.cacheReadInputTokens);
    expect(metricSample(text, 'loopfleet_llm_tokens_total', { ...labels, kind: 'cache_write' })).toBe(first!.cacheCreationInputTokens + second!.cacheCreationInputTokens);
    expect(text).not.toContain('kind="cached"');
  });
});

describe('prompt caching with OpenAI', () => {
  const server = new FakeOpenAiServer();
  let fleet: FleetFixture;
  let worker: RunningWorker;
  const sessionId = 'cache-openai';

  beforeAll(async () => {
    await server.start();
    fleet = await FleetFixture.create('prompt_cache_o', { LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.url, LLM_MODEL: 'gpt-test' });
    worker = await fleet.startWorker({ healthServer: true });
    server.enqueue(textStream(['One.'], { usage: usageBody({ prompt: 1200, completion: 2 }) }), textStream(['Two.'], { usage: usageBody({ prompt: 1300, completion: 2, cached: 1024 }) }));
    await converse(fleet, sessionId, ['one', 'two']);
  });

  afterAll(async () => {
    await fleet?.close();
    await server.close();
  });

  it('sends the session id as prompt_cache_key on every call', () => {
    expect(server.requests.map((request) => request.body.prompt_cache_key)).toEqual([sessionId, sessionId]);
  });

  it('counts OpenAI’s cached tokens as the cache read, and no cache write', async () => {
    expect(await finishedUsage(fleet, sessionId)).toEqual([
      expect.objectContaining({ promptTokens: 1200, cachedTokens: 0, cacheWriteTokens: 0 }),
      expect.objectContaining({ promptTokens: 1300, cachedTokens: 1024, cacheWriteTokens: 0 }),
    ]);
    const text = await metrics(worker);
    const labels = { queue: fleet.config.queueName, provider: 'openai', model: 'gpt-test' };
    expect(metricSample(text, 'loopfleet_llm_tokens_total', { ...labels, kind: 'cache_read' })).toBe(1024);
    expect(metricSample(text, 'loopfleet_llm_tokens_total', { ...labels, kind: 'cache_write' })).toBe(0);
  });
});
