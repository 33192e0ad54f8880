import { pino } from 'pino';

/** What pino writes in place of a redacted value. */
export const REDACTED = '[redacted]';

/**
 * Paths of credentials, always redacted (secrets never reach logs). pino's `*` matches
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

/** How Postgres starts a NOT NULL or CHECK violation's `detail`, which then prints the whole row. */
const FAILING_ROW = 'Failing row contains';
/** Shortest wrapper message replaced (drizzle's start with `Failed query: `, 14 characters, then the SQL). */
const MIN_WRAPPER_MESSAGE = 16;
/** How deep an error's causes and fields are followed. */
const MAX_ERROR_DEPTH = 8;

/**
 * pino's error serializer, holding back what a failed statement carries of users' data when contents
 * are redacted. drizzle wraps a driver error in one of its own whose message is `Failed query: <sql>
 * params: <values>` and which keeps the values as `params`; pino repeats each cause's message and
 * stack in the logged error's, so a store failure logged anywhere would print the messages the
 * statement wrote. Each such message keeps its SQL and loses its values, wherever it appears, and
 * `params` is redacted; so is Postgres's `detail` when it is a failing row. Every other field is
 * pino's own serialisation.
 */
export function errorSerializer(redactContent: boolean): (value: unknown) => unknown {
  const serialize = (value: unknown): unknown => pino.stdSerializers.err(value as Error);
  if (!redactContent) return serialize;
  return (value) => {
    const serialized = serialize(value);
    const replacements = contentCarriers(value);
    return replacements.size === 0 ? serialized : scrubbed(serialized, replacements, 0);
  };
}

/** Each text of the error's chain that carries content, with what is written in its place. */
function contentCarriers(error: unknown): Map<string, string> {
  const replacements = new Map<string, string>();
  const seen = new Set<object>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > MAX_ERROR_DEPTH || typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    try {
      const fields = value as Record<string, unknown>;
      // Its message is replaced wherever it appears; one too short to be a statement could match unrelated text.
      if (isQueryWrapper(fields) && typeof fields.message === 'string' && fields.message.length >= MIN_WRAPPER_MESSAGE) {
        replacements.set(fields.message, `Failed query: ${String(fields.query)}\nparams: ${REDACTED}`);
      }
      if (typeof fields.detail === 'string' && fields.detail.startsWith(FAILING_ROW)) replacements.set(fields.detail, `${FAILING_ROW} ${REDACTED}`);
      for (const key of new Set(['cause', 'errors', ...Object.keys(fields)])) visit(fields[key], depth + 1);
    } catch {
      // A field whose getter throws carries nothing pino could print either.
    }
  };
  visit(error, 0);
  return replacements;
}

function isQueryWrapper(fields: Record<string, unknown>): boolean {
  return 'query' in fields && 'params' in fields;
}

/** `value` with every carrier's text replaced and each query wrapper's `params` redacted; the original is not touched. */
function scrubbed(value: unknown, replacements: Map<string, string>, depth: number): unknown {
  if (typeof value === 'string') {
    let text = value;
    for (const [carrier, replacement] of replacements) text = text.replaceAll(carrier, replacement);
    return text;
  }
  if (depth > MAX_ERROR_DEPTH || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => scrubbed(item, replacements, depth + 1));
  const fields = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) copy[key] = key === 'params' && isQueryWrapper(fields) ? REDACTED : scrubbed(fields[key], replacements, depth + 1);
  return copy;
}
