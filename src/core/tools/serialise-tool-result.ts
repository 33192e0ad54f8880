import type { ImagePart } from '../messages.js';
import { ToolResultWithImages } from './tool-result-images.js';

/** A handler's return value as tool result text (and images), or why it cannot be sent to the model. */
export type SerialisedToolResult = { ok: true; content: string; images?: readonly ImagePart[] } | { ok: false; reason: string };

/**
 * Strings are sent as they are, a {@link ToolResultWithImages} as its text and images; `undefined` becomes `''` and `null` `'null'`; anything else is
 * `JSON.stringify`-ed. A value JSON cannot represent (circular, BigInt, a function, a symbol) is a
 * failure the model is told about, never a crash of the loop.
 */
export function serialiseToolResult(value: unknown): SerialisedToolResult {
  if (typeof value === 'string') return { ok: true, content: value };
  if (value instanceof ToolResultWithImages) return value.images.length === 0 ? { ok: true, content: value.text } : { ok: true, content: value.text, images: value.images };
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
