/**
 * Tool call ids as Anthropic accepts them. The Messages API requires `tool_use.id` (and so
 * `tool_result.tool_use_id`) to match `^[a-zA-Z0-9_-]+$`; ids minted by Anthropic always do, but a
 * session may hold ids from another provider (some OpenAI-compatible endpoints mint ids such as
 * `functions.search:0`). Such an id is rewritten the same way wherever it appears, so calls and
 * results still pair up, and a hash of the original keeps two different ids from colliding.
 */

const VALID_ID = /^[A-Za-z0-9_-]+$/;

/** `id` when Anthropic accepts it as is; otherwise a deterministic, valid stand-in. */
export function toAnthropicToolUseId(id: string): string {
  if (VALID_ID.test(id)) return id;
  const cleaned = id.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${cleaned === '' ? 'call' : cleaned}_${fnv1a(id)}`;
}

/** 32-bit FNV-1a of the UTF-16 code units, as 8 hex digits: tiny, stable and good enough here. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
