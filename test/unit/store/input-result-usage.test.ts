import { describe, expect, it } from 'vitest';
import { inputResultSchema } from '../../../src/store/rows/input-row.js';

const usage = { promptTokens: 120, completionTokens: 8, cachedTokens: 100, reasoningTokens: 0, totalTokens: 128, llmCalls: 1 };
const result = { status: 'completed', finalText: 'ok', rounds: 1, toolCalls: 0 };

describe('a stored result’s usage', () => {
  it('reads a result stored before the cache write (and cost) was counted with cacheWriteTokens 0 and cost 0', () => {
    expect(inputResultSchema.parse({ ...result, usage }).usage).toEqual({ ...usage, cacheWriteTokens: 0, costUsd: 0, costPicoUsd: 0 });
  });

  it('keeps the cache write of a result that has one', () => {
    expect(inputResultSchema.parse({ ...result, usage: { ...usage, cacheWriteTokens: 20 } }).usage.cacheWriteTokens).toBe(20);
  });
});
