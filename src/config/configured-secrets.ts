import { urlSecrets } from './redact-url.js';
import type { ResolvedConfig } from './resolved-config.js';

/**
 * Every secret `config` holds: the API keys, and the passwords of its URLs (Postgres, Redis, the
 * providers' base URLs) with the URLs that carry them (`urlSecrets`). What may never appear in a log
 * line, an error message, a stored result or a stream event; a `SecretScrubber` takes them out of
 * text that comes from outside (a provider's error body, a tools module's error).
 */
export function configuredSecrets(config: ResolvedConfig): string[] {
  const { llm } = config;
  return [
    ...(llm.openai.apiKey === null ? [] : [llm.openai.apiKey]),
    ...(llm.anthropic.apiKey === null ? [] : [llm.anthropic.apiKey]),
    ...urlSecrets(config.databaseUrl),
    ...urlSecrets(config.redisUrl),
    ...urlSecrets(llm.openai.baseUrl),
    ...urlSecrets(llm.anthropic.baseUrl),
  ];
}
