/**
 * Anthropic's prompt caching (docs/llm-providers.md, "Prompt caching"): a `cache_control` breakpoint
 * on a block caches the prompt up to and including it — tools first, then the system prompt, then
 * the messages. A request may carry at most {@link MAX_CACHE_BREAKPOINTS}; the adapter sets three at
 * most: the last tool, the system prompt, and the end of the earlier inputs
 * (`LlmRequest.cacheBreakpoint`). A prefix too short to cache is ignored by the provider.
 */
import type { TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { AnthropicBlock, AnthropicMessage } from './to-anthropic-messages.js';

/** Anthropic refuses a request with more breakpoints than this. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The only cache type Anthropic has: the default five-minute lifetime. */
export const EPHEMERAL = Object.freeze({ type: 'ephemeral' as const });

/** The system prompt as one text block carrying a breakpoint. */
export function cachedSystem(text: string): TextBlockParam[] {
  return [{ type: 'text', text, cache_control: EPHEMERAL }];
}

/** The tools with a breakpoint on the last one (a copy: the given ones are not changed). */
export function withCachedLastTool(tools: Tool[]): Tool[] {
  const last = tools.at(-1);
  if (last === undefined) return tools;
  return [...tools.slice(0, -1), Object.assign({}, last, { cache_control: EPHEMERAL })];
}

/**
 * Puts a breakpoint on `block` where it stands in `turns` (found by identity; a copy replaces it).
 * Nothing happens when it is no longer there (a final assistant text trimmed into a copy).
 */
export function markBlock(turns: AnthropicMessage[], block: AnthropicBlock | null): void {
  if (block === null) return;
  for (const turn of turns) {
    const at = turn.content.indexOf(block);
    if (at !== -1) {
      turn.content[at] = Object.assign({}, block, { cache_control: EPHEMERAL });
      return;
    }
  }
}
