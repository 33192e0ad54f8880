/**
 * The fake server's prompt cache, by Anthropic's rules for `cache_control` breakpoints: the prompt is
 * tools, then system blocks, then message blocks, in that order; a breakpoint caches the prefix up to
 * and including its block. A request reads the longest prefix cached before that ends at a block at
 * most {@link LOOKBACK_BLOCKS} blocks before one of its breakpoints, and writes the prefix up to its
 * last breakpoint when that was not cached yet. The usage it reports is Anthropic's:
 * `cache_read_input_tokens`, `cache_creation_input_tokens`, and `input_tokens` for the rest.
 * A block's tokens are its JSON's length / 4 (at least 1), the breakpoint itself left out; there is
 * no minimum cacheable length. The cache lives as long as the server (no expiry).
 */
import { createHash } from 'node:crypto';

/** How far back from a breakpoint Anthropic looks for an earlier cached prefix. */
export const LOOKBACK_BLOCKS = 20;

/** The input side of a reply's usage. */
export interface PromptUsage {
  inputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** One block of the prompt: its cumulative hash and token count through it, and whether it is a breakpoint. */
interface PrefixPoint {
  hash: string;
  tokens: number;
  breakpoint: boolean;
}

/** A server's prompt cache: the prefixes its requests' breakpoints wrote. */
export class FakePromptCache {
  readonly #written = new Set<string>();

  /** The usage of `body` (a Messages request), and the prefixes it writes remembered. */
  take(body: Record<string, unknown> | null): PromptUsage {
    const points = prefixPoints(body);
    const total = points.at(-1)?.tokens ?? 0;
    const breakpoints = points.flatMap((point, index) => (point.breakpoint ? [index] : []));
    let read = -1;
    for (const at of breakpoints) {
      for (let index = at; index >= 0 && index > at - LOOKBACK_BLOCKS; index -= 1) {
        if (this.#written.has(points[index]!.hash)) read = Math.max(read, index);
      }
    }
    const last = breakpoints.at(-1) ?? -1;
    const readTokens = read === -1 ? 0 : points[read]!.tokens;
    const writeTokens = last > read ? points[last]!.tokens - readTokens : 0;
    for (const at of breakpoints) this.#written.add(points[at]!.hash);
    return { inputTokens: total - readTokens - writeTokens, cacheReadInputTokens: readTokens, cacheCreationInputTokens: writeTokens };
  }
}

function prefixPoints(body: Record<string, unknown> | null): PrefixPoint[] {
  const blocks = [...list(body?.tools), ...systemBlocks(body?.system), ...list(body?.messages).flatMap(messageBlocks)];
  const points: PrefixPoint[] = [];
  let hash = String(body?.model ?? '');
  let tokens = 0;
  for (const block of blocks) {
    const { cache_control: control, ...rest } = block;
    const text = JSON.stringify(rest);
    hash = createHash('sha256').update(hash).update('\n').update(text).digest('hex');
    tokens += Math.max(1, Math.ceil(text.length / 4));
    points.push({ hash, tokens, breakpoint: control !== undefined && control !== null });
  }
  return points;
}

function systemBlocks(system: unknown): Record<string, unknown>[] {
  return typeof system === 'string' ? [{ type: 'text', text: system }] : list(system);
}

/** A message's blocks, each tagged with its role (a string content is one text block). */
function messageBlocks(message: Record<string, unknown>): Record<string, unknown>[] {
  const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : list(message.content);
  return content.map((block) => Object.assign({ role: message.role }, block));
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null) : [];
}
