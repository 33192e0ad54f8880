import type { LlmConfig, LlmProviderName } from '../config/index.js';
import type { Llm } from '../core/ports/llm.js';
import { AnthropicLlm } from './anthropic/anthropic-llm.js';
import { FallbackLlm } from './fallback-llm.js';
import { createNodeHttpFetch } from './node-http-fetch.js';
import { OpenAiLlm } from './openai/openai-llm.js';
import { ScriptedLlm } from './scripted-llm.js';

/**
 * The `Llm` a worker uses, from the validated configuration (docs/llm-providers.md): the primary
 * provider, wrapped in a `FallbackLlm` when `LLM_FALLBACK` names more pairs. `scripted` is the offline
 * provider: it echoes the last user message, or calls the tool an input names (`/tool <name> <JSON>`),
 * so the fleet and its tools run end to end with no key.
 *
 * @param secrets - taken out of every error the providers throw, besides their own keys and base
 *   URL passwords (a worker passes `configuredSecrets`: the other key, the Postgres and Redis passwords).
 */
export function createLlm(config: LlmConfig, secrets: readonly string[] = []): Llm {
  const primary = providerLlm(config, config.provider, config.model, secrets);
  if (config.fallback.length === 0) return primary;
  const others = config.fallback.map((pair) => providerLlm(config, pair.provider, pair.model, secrets));
  return new FallbackLlm([primary, ...others], { secrets });
}

function providerLlm(config: LlmConfig, provider: LlmProviderName, model: string, secrets: readonly string[]): Llm {
  switch (provider) {
    case 'openai':
      return new OpenAiLlm({
        apiKey: requireKey(config.openai.apiKey, 'OPENAI_API_KEY'),
        baseUrl: config.openai.baseUrl,
        model,
        timeoutMs: config.requestTimeoutMs,
        promptCacheKey: config.openaiPromptCacheKey,
        secrets,
        ...httpClient(config),
      });
    case 'anthropic':
      return new AnthropicLlm({
        apiKey: requireKey(config.anthropic.apiKey, 'ANTHROPIC_API_KEY'),
        baseUrl: config.anthropic.baseUrl,
        model,
        timeoutMs: config.requestTimeoutMs,
        secrets,
        ...httpClient(config),
      });
    case 'scripted':
      return new ScriptedLlm([], { model, whenExhausted: 'echo', recordRequests: false });
  }
}

/** The SDK's `fetch` for `LLM_HTTP_CLIENT`: its own node:http client (kept-alive connections) or the global one. */
function httpClient(config: LlmConfig): { fetch?: typeof fetch } {
  return config.httpClient === 'node' ? { fetch: createNodeHttpFetch() } : {};
}

/** The configuration loader already refuses a provider without its key; this keeps the types honest. */
function requireKey(key: string | null, variable: string): string {
  if (key === null) throw new Error(`${variable} is required`);
  return key;
}
