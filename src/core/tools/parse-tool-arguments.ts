/** Parsed tool arguments, or why they could not be used. */
export type ParsedToolArguments = { ok: true; args: Record<string, unknown> } | { ok: false; reason: string };

const CONTROL_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Turns the raw `arguments` text a model produced into an arguments object.
 * Empty or blank text means no arguments (`{}`). If `JSON.parse` fails, it is retried once
 * with raw newlines, carriage returns and tabs inside string literals escaped — models often emit
 * them in long string values. That is the only repair: truncated JSON (unbalanced braces or quotes,
 * typically from a `max_tokens` cut) stays an error, because completing it would let a tool act on
 * half its input, such as writing half a file. A value that is not a JSON
 * object (array, string, number, null) is an error too.
 */
export function parseToolArguments(raw: string): ParsedToolArguments {
  if (raw.trim() === '') return { ok: true, args: {} };
  const first = parseJson(raw);
  if (first.ok) return asArgumentsObject(first.value);
  const repaired = parseJson(escapeControlCharactersInStrings(raw));
  if (repaired.ok) return asArgumentsObject(repaired.value);
  // Report the error in the text the model sent, not in the escaped copy.
  return { ok: false, reason: `arguments are not valid JSON (${first.error}); send the complete arguments object again` };
}

/**
 * Deepest nesting of arrays and objects accepted in arguments. Past it, the recursive walks the
 * arguments go through on their way to the ledger (`JSON.stringify`, `storable`) would overflow the
 * stack and fail the input after the model's reply; no tool schema needs more.
 */
export const MAX_ARGUMENT_DEPTH = 64;

function asArgumentsObject(value: unknown): ParsedToolArguments {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: `arguments must be a JSON object, got ${describeJson(value)}` };
  }
  if (nestsDeeperThan(value, MAX_ARGUMENT_DEPTH)) return { ok: false, reason: `arguments nest arrays and objects deeper than ${MAX_ARGUMENT_DEPTH} levels` };
  return { ok: true, args: value as Record<string, unknown> };
}

/** Whether parsed JSON nests arrays and objects deeper than `max` levels; without recursion, so any depth is measured. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Escapes raw `\n`, `\r` and `\t` that appear inside JSON string literals; whitespace between tokens
 * is left alone (it is valid JSON). Tracks quotes and backslash escapes, nothing else.
 */
export function escapeControlCharactersInStrings(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (const char of text) {
    if (inString && !escaped && CONTROL_ESCAPES[char] !== undefined) {
      out += CONTROL_ESCAPES[char];
      continue;
    }
    out += char;
    if (escaped) escaped = false;
    else if (inString && char === '\\') escaped = true;
    else if (char === '"') inString = !inString;
  }
  return out;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
