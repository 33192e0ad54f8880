/** What pino writes in place of a redacted value. */
export const REDACTED = '[redacted]';

/**
 * Paths of credentials, always redacted (DESIGN.md §6: secrets never reach logs). pino's `*` matches
 * exactly one level, so each key is listed at the top level and one level down (`{ llm: { apiKey } }`,
 * `{ request: { headers } }`).
 */
export const SECRET_PATHS: readonly string[] = [
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'password',
  '*.password',
  'OPENAI_API_KEY',
  '*.OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  '*.ANTHROPIC_API_KEY',
];

const CONTENT_KEYS = ['content', 'input', 'messages', 'finalText', 'text', 'arguments', 'args', 'output'];

/**
 * Paths of conversation content — prompts, replies, tool arguments and results — redacted unless the
 * operator opts in with `LOG_CONTENT=true`, since users' conversations are often as sensitive as keys.
 */
export const CONTENT_PATHS: readonly string[] = CONTENT_KEYS.flatMap((key) => [key, `*.${key}`]);

/** The paths to redact: secrets always, contents when `redactContent` is set. */
export function redactionPaths(redactContent: boolean): string[] {
  return redactContent ? [...SECRET_PATHS, ...CONTENT_PATHS] : [...SECRET_PATHS];
}
