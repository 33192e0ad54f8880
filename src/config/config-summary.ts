import { redactUrl } from './redact-url.js';
import type { ProviderEndpointConfig, ResolvedConfig } from './resolved-config.js';

/**
 * A view of `config` that is safe to log at start-up: API keys become `'set'` or `null`, and every URL
 * has its password masked. Everything else is shown as resolved.
 */
export function configSummary(config: ResolvedConfig): Record<string, unknown> {
  return {
    databaseUrl: redactUrl(config.databaseUrl),
    redisUrl: redactUrl(config.redisUrl),
    queueName: config.queueName,
    llm: {
      provider: config.llm.provider,
      model: config.llm.model,
      openai: endpointSummary(config.llm.openai),
      httpClient: config.llm.httpClient,
      anthropic: endpointSummary(config.llm.anthropic),
      requestTimeoutMs: config.llm.requestTimeoutMs,
      fallback: config.llm.fallback.map((pair) => `${pair.provider}:${pair.model}`),
    },
    worker: { ...config.worker },
    events: { ...config.events },
    metrics: { ...config.metrics },
    log: { ...config.log },
  };
}

function endpointSummary(endpoint: ProviderEndpointConfig): Record<string, unknown> {
  return {
    apiKey: endpoint.apiKey === null ? null : 'set',
    baseUrl: endpoint.baseUrl === null ? null : redactUrl(endpoint.baseUrl),
  };
}
