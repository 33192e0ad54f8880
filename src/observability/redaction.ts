import { pino } from 'pino';
import { isConnectionFailure, withoutStacks } from './connection-failure.js';

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

/** How deep {@link SecretScrubber.error} follows an error's causes and fields. */
const MAX_SCRUB_DEPTH = 16;

/**
 * Takes known secrets — the configured API keys and URL passwords (`configuredSecrets`) — out of
 * text and errors that come from outside: a provider's error body that quotes the key it refused,
 * a tools module whose error quotes the environment. Each secret is replaced by {@link REDACTED}
 * as written and as it reads inside a JSON string or a URL (escaped, percent-encoded), longest
 * first, in one pass, so the marker itself is never rewritten. Every non-empty secret counts, however
 * short: a short password costs messages some words, never the guarantee.
 */
export class SecretScrubber {
  readonly #pattern: RegExp | null;

  constructor(secrets: Iterable<string | null | undefined>) {
    const needles = new Set<string>();
    for (const secret of secrets) {
      if (typeof secret !== 'string' || secret === '') continue;
      needles.add(secret);
      needles.add(JSON.stringify(secret).slice(1, -1));
      needles.add(encodeURIComponent(secret));
    }
    const alternatives = [...needles].sort((a, b) => b.length - a.length).map((needle) => needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.#pattern = alternatives.length === 0 ? null : new RegExp(alternatives.join('|'), 'g');
  }

  /** `text` with every secret replaced. */
  text(text: string): string {
    return this.#pattern === null ? text : text.replace(this.#pattern, REDACTED);
  }

  /**
   * `value` itself when no secret is in it; otherwise a copy with every secret replaced in every
   * string it holds — an error's message, stack and own fields, its `cause` and what they hold,
   * plain objects and arrays (an SDK error's parsed body) — keeping each error's prototype and
   * fields, so `instanceof`, `status` and `headers` read as before. Objects of other classes
   * (`Headers`, a `Response`) are kept as they are. The original is not touched.
   */
  error<T>(value: T): T {
    if (this.#pattern === null || !this.#holdsSecret(value, 0, new Set())) return value;
    return this.#copy(value, 0, new Map()) as T;
  }

  #holdsSecret(value: unknown, depth: number, seen: Set<object>): boolean {
    if (typeof value === 'string') return value.search(this.#pattern!) !== -1;
    if (!isScrubbable(value) || depth > MAX_SCRUB_DEPTH || seen.has(value)) return false;
    seen.add(value);
    return Reflect.ownKeys(value).some((key) => this.#holdsSecret(Reflect.getOwnPropertyDescriptor(value, key)?.value, depth + 1, seen));
  }

  #copy(value: unknown, depth: number, copies: Map<object, object>): unknown {
    if (typeof value === 'string') return this.text(value);
    if (!isScrubbable(value) || depth > MAX_SCRUB_DEPTH) return value;
    const known = copies.get(value);
    if (known !== undefined) return known;
    const copy: object = Array.isArray(value) ? [] : Object.create(Object.getPrototypeOf(value) as object | null);
    copies.set(value, copy);
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key)!;
      // A getter is kept as it is: calling it could have effects, and what it returns is not stored.
      if ('value' in descriptor) descriptor.value = this.#copy(descriptor.value, depth + 1, copies);
      Object.defineProperty(copy, key, descriptor);
    }
    return copy;
  }
}

/** Errors, arrays and plain objects: what {@link SecretScrubber.error} looks into and copies. */
function isScrubbable(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof Error || Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A scrubber that knows no secret: text and errors pass unchanged. */
const NO_SECRETS = new SecretScrubber([]);

/** How Postgres starts a NOT NULL or CHECK violation's `detail`, which then prints the whole row. */
const FAILING_ROW = 'Failing row contains';
/** Shortest wrapper message replaced (drizzle's start with `Failed query: `, 14 characters, then the SQL). */
const MIN_WRAPPER_MESSAGE = 16;
/** How deep an error's causes and fields are followed. */
const MAX_ERROR_DEPTH = 8;

/**
 * pino's error serializer. Two things never reach a log line through it:
 *
 * - A failed command's arguments. ioredis puts the command that failed on its error (`command: {
 *   name, args }`, also on each of a pipeline's `previousErrors`), and a refused `AUTH` carries the
 *   password as an argument; other commands carry keys and message contents. So `args` is dropped
 *   from every `command` of the error and of what it holds, whatever `redactContent` says; the
 *   command's name stays.
 * - While contents are redacted, what a failed statement carries of users' data. drizzle wraps a
 *   driver error in one of its own whose message is `Failed query: <sql> params: <values>` and which
 *   keeps the values as `params`; pino repeats each cause's message and stack in the logged error's,
 *   so a store failure logged anywhere would print the messages the statement wrote. Each such
 *   message keeps its SQL and loses its values, wherever it appears, and `params` is redacted; so is
 *   Postgres's `detail` when it is a failing row.
 *
 * A lost or refused connection (`isConnectionFailure`) is logged without its stacks, its causes'
 * included: they point into the driver, and an outage would print one for every failed call.
 *
 * Every other field is pino's own serialisation, with each of `secrets` replaced wherever it
 * appears; an error found inside a field (a `previousErrors` entry) is serialised the same way
 * rather than left to `JSON.stringify`.
 */
export function errorSerializer(redactContent: boolean, secrets: SecretScrubber = NO_SECRETS): (value: unknown) => unknown {
  return (value) => {
    const serialized = pino.stdSerializers.err(value as Error);
    const rules: CleanRules = { redactContent, replacements: redactContent ? contentCarriers(value) : new Map(), secrets };
    const clean = cleaned(serialized, rules, 0);
    // A lost connection is an outage, not a bug: its stack only floods the log while the outage lasts.
    return isConnectionFailure(value) ? withoutStacks(clean) : clean;
  };
}

/** What {@link cleaned} takes out of a serialised error. */
interface CleanRules {
  redactContent: boolean;
  /** Texts that carry contents, with what is written in their place. */
  replacements: ReadonlyMap<string, string>;
  secrets: SecretScrubber;
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

/** Written in place of what lies deeper than {@link MAX_ERROR_DEPTH}: it was not looked at, so it is not shown. */
const TOO_DEEP = '[too deep]';

/** A copy of the serialised `value` by `rules`, with no command's arguments; the original is not touched. */
function cleaned(value: unknown, rules: CleanRules, depth: number): unknown {
  if (typeof value === 'string') {
    let text = value;
    for (const [carrier, replacement] of rules.replacements) text = text.replaceAll(carrier, replacement);
    return rules.secrets.text(text);
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_ERROR_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => cleaned(item, rules, depth + 1));
  const fields = (value instanceof Error ? pino.stdSerializers.err(value) : value) as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const field = fields[key];
    if (key === 'params' && rules.redactContent && isQueryWrapper(fields)) copy[key] = REDACTED;
    else if (key === 'command' && typeof field === 'object' && field !== null) copy[key] = withoutArguments(field as Record<string, unknown>, rules, depth + 1);
    else copy[key] = cleaned(field, rules, depth + 1);
  }
  return copy;
}

/** A failed command as logged: everything but its arguments. */
function withoutArguments(command: Record<string, unknown>, rules: CleanRules, depth: number): unknown {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(command)) if (key !== 'args') copy[key] = cleaned(command[key], rules, depth + 1);
  return copy;
}
