/**
 * `createLlm` gives each provider's SDK the HTTP client `LLM_HTTP_CLIENT` names. Node's global `fetch`
 * (undici) adds `sec-fetch-mode` to every request; the node:http client sends only what the SDK set.
 * And the OpenAI adapter it builds sends the token cap in the field the configured model accepts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { createLlm } from '../../../src/llm/create-llm.js';
import { llmRequest as anthropicRequest } from '../../support/fake-anthropic/llm-request.js';
import { startFakeAnthropicServer, textStep, type FakeAnthropicServer } from '../../support/fake-anthropic-server.js';
import { llmRequest as openAiRequest } from '../../support/fake-openai/llm-request.js';
import { FakeOpenAiServer, textStream } from '../../support/fake-openai-server.js';

const openai = new FakeOpenAiServer();
let anthropic: FakeAnthropicServer;
const signal = () => new AbortController().signal;

beforeAll(async () => {
  await openai.start();
  anthropic = await startFakeAnthropicServer();
});
afterAll(async () => {
  await openai.close();
  await anthropic.close();
});

describe('createLlm: the SDKs\' HTTP client (LLM_HTTP_CLIENT)', () => {
  it.each([
    ['node', undefined],
    ['fetch', 'cors'],
  ] as const)('%s: both providers send through it', async (client, fetchMode) => {
    const env = { LLM_HTTP_CLIENT: client, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: openai.url, ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: anthropic.url };
    openai.enqueue(textStream(['hi']));
    await createLlm(loadConfig({ ...env, LLM_PROVIDER: 'openai' }).llm).complete(openAiRequest(), { signal: signal() });
    expect(openai.requests.at(-1)?.headers['sec-fetch-mode']).toBe(fetchMode);
    anthropic.push(textStep(['hi']));
    await createLlm(loadConfig({ ...env, LLM_PROVIDER: 'anthropic' }).llm).complete(anthropicRequest(), { signal: signal() });
    expect(anthropic.requests.at(-1)?.headers['sec-fetch-mode']).toBe(fetchMode);
  });
});

describe('createLlm: the OpenAI token-cap field for LLM_MODEL (reasoning models refuse max_tokens)', () => {
  it.each([
    ['o4-mini', 'max_completion_tokens'],
    ['o3', 'max_completion_tokens'],
    ['gpt-5-mini', 'max_completion_tokens'],
    ['gpt-4o-mini', 'max_tokens'],
    ['qwen2.5-coder:7b', 'max_tokens'],
  ] as const)('%s: %s', async (model, field) => {
    const env = { LLM_PROVIDER: 'openai', LLM_MODEL: model, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: openai.url };
    openai.enqueue(textStream(['hi']));
    await createLlm(loadConfig(env).llm).complete(openAiRequest({ maxTokens: 4096 }), { signal: signal() });
    const body = openai.requests.at(-1)!.body;
    expect(body.model).toBe(model);
    expect(body[field]).toBe(4096);
    expect(Object.keys(body).filter((key) => key.startsWith('max_'))).toEqual([field]);
  });
});
