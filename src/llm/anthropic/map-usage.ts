/**
 * Anthropic's usage figures → {@link LlmUsage}.
 *
 * Anthropic splits the prompt in three: `input_tokens` (not cached), `cache_read_input_tokens` and
 * `cache_creation_input_tokens`; the prompt's full size is their sum. `promptTokens` is that sum,
 * because the loop uses it as "how big was the context" (context checkpoint, budget) and because it
 * then means the same as OpenAI's `prompt_tokens`, whose cached part is a subset of it.
 * `cachedTokens` is the cache read — the part billed at the cached rate — and `cacheWriteTokens` the
 * cache write (`cache_creation_input_tokens`), billed above the base rate.
 *
 * A stream reports usage twice: `message_start` carries the input figures (and an early output
 * count), `message_delta` the final output count and, in newer API versions, cumulative input
 * figures. Later non-null values replace earlier ones.
 */
import type { LlmUsage } from '../../core/ports/llm.js';

/** The usage fields read from `message_start.message.usage` and `message_delta.usage`. */
export interface AnthropicUsageFields {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

/** The running figures of one stream; all counts in tokens. */
export interface UsageTally {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
  thinking: number;
}

/** Nothing reported yet. */
export function emptyTally(): UsageTally {
  return { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, thinking: 0 };
}

/** The tally with every figure `fields` reports (cumulative values, so they replace, not add). */
export function updateTally(tally: UsageTally, fields: AnthropicUsageFields | null | undefined): UsageTally {
  if (fields === null || fields === undefined || typeof fields !== 'object') return tally;
  return {
    input: count(fields.input_tokens) ?? tally.input,
    output: count(fields.output_tokens) ?? tally.output,
    cacheRead: count(fields.cache_read_input_tokens) ?? tally.cacheRead,
    cacheCreation: count(fields.cache_creation_input_tokens) ?? tally.cacheCreation,
    thinking: count(fields.output_tokens_details?.thinking_tokens) ?? tally.thinking,
  };
}

/** The unified usage; see the module comment for what `promptTokens` includes. */
export function toLlmUsage(tally: UsageTally): LlmUsage {
  const promptTokens = tally.input + tally.cacheRead + tally.cacheCreation;
  return {
    promptTokens,
    completionTokens: tally.output,
    cachedTokens: tally.cacheRead,
    cacheWriteTokens: tally.cacheCreation,
    reasoningTokens: tally.thinking,
    totalTokens: promptTokens + tally.output,
  };
}

/** A usable token count, or null for missing, negative or non-numeric values. */
function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : null;
}
