import { DEFAULT_DATABASE_URL } from './env-schema.js';
import { urlSecrets } from './redact-url.js';
import type { ResolvedConfig } from './resolved-config.js';

/**
 * The default `DATABASE_URL`'s password (`postgres`), printed in README and `loopfleet help`: it
 * protects nothing, and scrubbing it would turn every "postgres" in a message, a stack path
 * (`postgres-session-store`) or a provider's text into `[redacted]`.
 */
const PUBLIC_DEFAULTS = new Set(urlSecrets(DEFAULT_DATABASE_URL));

/**
 * Every secret `config` holds: the API keys, and the passwords of its URLs (Postgres, Redis, the
 * providers' base URLs) with the URLs that carry them (`urlSecrets`). What may never appear in a log
 * line, an error message, a stored result or a stream event; a `SecretScrubber` takes them out of
 * text that comes from outside (a provider's error body, a tools module's error). The documented
 * default password is no secret and is left out.
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
  ].filter((secret) => !PUBLIC_DEFAULTS.has(secret));
}
