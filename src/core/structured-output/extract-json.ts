/**
 * Finding the JSON object in what a model wrote. Models asked for JSON still wrap it
 * in prose or code fences, or leave a trailing comma; each step of the chain undoes one of those
 * habits, and the first candidate that parses as an object wins.
 *
 * Deliberately not repaired: a truncated object (no closing brace). Completing it would invent data.
 */

/** What {@link extractJsonObject} found. */
export type ExtractResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; reason: 'no_json' | 'invalid_json' | 'not_object'; message: string };

/** Brace-balanced candidates tried before giving up; bounds the work on long prose full of braces. */
const MAX_BRACE_CANDIDATES = 32;

const FENCE = /```[ \t]*(?:json5?|JSON)?[ \t]*\r?\n?([\s\S]*?)```/;

/**
 * Runs the repair chain — `JSON.parse` of the whole text, of the first fenced block, of each
 * brace-balanced `{…}` in turn — each candidate also tried with trailing commas removed.
 */
export function extractJsonObject(text: string): ExtractResult {
  const whole = text.trim();
  if (whole === '') return { ok: false, reason: 'no_json', message: 'the reply is empty' };
  const fenced = FENCE.exec(whole)?.[1]?.trim();
  for (const candidate of candidates(whole, fenced)) {
    const parsed = parseLenient(candidate);
    if (parsed === undefined) continue;
    if (isPlainObject(parsed.value)) return { ok: true, value: parsed.value };
    // The whole reply (or its fenced block) is valid JSON of another type: that is the model's answer,
    // and digging an object out of it (say, the first element of an array) would change its meaning.
    return { ok: false, reason: 'not_object', message: `the reply is JSON but ${describeType(parsed.value)}, not an object` };
  }
  if (whole.includes('{')) return { ok: false, reason: 'invalid_json', message: 'the reply contains no parseable JSON object' };
  return { ok: false, reason: 'no_json', message: 'the reply contains no JSON object' };
}

/** Lazily, so a reply that parses as-is costs one `JSON.parse`. */
function* candidates(whole: string, fenced: string | undefined): Generator<string> {
  yield whole;
  if (fenced !== undefined && fenced !== '') yield fenced;
  yield* balancedObjects(fenced ?? whole);
  if (fenced !== undefined) yield* balancedObjects(whole);
}

function parseLenient(candidate: string): { value: unknown } | undefined {
  for (const attempt of [candidate, withoutTrailingCommas(candidate)]) {
    try {
      return { value: JSON.parse(attempt) as unknown };
    } catch {
      // Not JSON as written: try the next repair.
    }
  }
  return undefined;
}

/**
 * Every `{…}` whose braces balance, starting at each `{` from the left. String-aware: braces inside
 * JSON strings do not count and `\"` does not end a string. Quotes in prose before the first `{` are
 * never seen (scanning starts at a brace), so an apostrophe in "Here's the JSON" cannot derail it;
 * a `}` before any `{` is simply never reached.
 */
export function* balancedObjects(text: string): Generator<string> {
  let start = text.indexOf('{');
  for (let tried = 0; start !== -1 && tried < MAX_BRACE_CANDIDATES; tried += 1) {
    const end = matchingBrace(text, start);
    if (end !== -1) yield text.slice(start, end + 1);
    start = text.indexOf('{', start + 1);
  }
}

/** Index of the `}` closing the `{` at `start`, or -1 when it never closes (truncated output). */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Drops a `,` that is followed (after whitespace) by `}` or `]`, outside strings. */
export function withoutTrailingCommas(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === '\\' && i + 1 < text.length) out += text[++i];
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === ',' && closesNext(text, i + 1)) continue;
    out += char;
  }
  return out;
}

function closesNext(text: string, from: number): boolean {
  for (let i = from; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '}' || char === ']') return true;
    if (!/\s/.test(char)) return false;
  }
  return false;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}
