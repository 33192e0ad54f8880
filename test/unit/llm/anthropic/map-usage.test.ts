import { describe, expect, it } from 'vitest';
import { emptyTally, toLlmUsage, updateTally, type AnthropicUsageFields } from '../../../../src/llm/anthropic/index.js';

function usageOf(...reports: (AnthropicUsageFields | null | undefined)[]) {
  return toLlmUsage(reports.reduce((tally, fields) => updateTally(tally, fields), emptyTally()));
}

describe('Anthropic usage', () => {
  it('counts cache reads and writes into the prompt, and each apart: cachedTokens the read, cacheWriteTokens the write', () => {
    expect(usageOf({ input_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 300, output_tokens: 1 }, { output_tokens: 42 })).toEqual({
      promptTokens: 1320,
      completionTokens: 42,
      cachedTokens: 1000,
      cacheWriteTokens: 300,
      reasoningTokens: 0,
      totalTokens: 1362,
    });
  });

  it('takes cumulative message_delta figures over message_start ones, ignoring nulls', () => {
    const start = { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: null };
    const delta = { input_tokens: null, output_tokens: 30, cache_read_input_tokens: 7, output_tokens_details: { thinking_tokens: 12 } };
    expect(usageOf(start, delta)).toEqual({ promptTokens: 17, completionTokens: 30, cachedTokens: 7, cacheWriteTokens: 0, reasoningTokens: 12, totalTokens: 47 });
  });

  it.each([
    ['nothing', [undefined]],
    ['null', [null]],
    ['garbage values', [{ input_tokens: -3, output_tokens: Number.NaN } as AnthropicUsageFields]],
  ])('%s counts as zero', (_name, reports) => {
    expect(usageOf(...reports)).toEqual({ promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0 });
  });
});
