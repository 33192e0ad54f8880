/** A handler's return value as tool result text, or why it cannot be sent to the model. */
export type SerialisedToolResult = { ok: true; content: string } | { ok: false; reason: string };

/**
 * Strings are sent as they are; `undefined` becomes `''` and `null` `'null'`; anything else is
 * `JSON.stringify`-ed. A value JSON cannot represent (circular, BigInt, a function, a symbol) is a
 * failure the model is told about, never a crash of the loop.
 */
export function serialiseToolResult(value: unknown): SerialisedToolResult {
  if (typeof value === 'string') return { ok: true, content: value };
  if (value === undefined) return { ok: true, content: '' };
  if (value === null) return { ok: true, content: 'null' };
  try {
    const content = JSON.stringify(value) as string | undefined;
    // JSON.stringify returns undefined for functions and symbols instead of throwing.
    if (content === undefined) return { ok: false, reason: `a ${typeof value} cannot be serialised to JSON` };
    return { ok: true, content };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
