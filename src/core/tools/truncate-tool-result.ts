/** Default cap on a tool result, in characters (UTF-16 code units), as power-loop's RESULT_MAX_CHARS. */
export const DEFAULT_MAX_RESULT_CHARS = 50_000;

/** Characters kept back from the cap for the truncation notice. */
const NOTICE_RESERVE = 50;

/**
 * Caps a tool result so one chatty tool cannot flood the context. Content of at most `maxChars` is
 * returned unchanged; longer content keeps its first `maxChars − 50` characters followed by
 * `\n... (truncated, N total chars)`, N being the original length. A surrogate pair is never split.
 */
export function truncateToolResult(content: string, maxChars: number = DEFAULT_MAX_RESULT_CHARS): string {
  if (content.length <= maxChars) return content;
  let keep = Math.max(0, maxChars - NOTICE_RESERVE);
  if (keep > 0 && isHighSurrogate(content.charCodeAt(keep - 1))) keep -= 1;
  return `${content.slice(0, keep)}\n... (truncated, ${content.length} total chars)`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
