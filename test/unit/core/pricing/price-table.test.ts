import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../../src/core/errors/index.js';
import { costPicoUsd, DEFAULT_PRICES, picoToUsd, PriceTable, priceTableFromFile, toTokenRates } from '../../../../src/core/pricing/index.js';
import { ZERO_USAGE } from '../../../../src/core/ports/llm.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { LoopHarness, runChecked } from '../loop/loop-harness.js';

const usage = (fields: Partial<typeof ZERO_USAGE>) => Object.assign({}, ZERO_USAGE, fields);

describe('the price table', () => {
  it('prices a dated snapshot by the longest prefix, and an exact key first', () => {
    const table = new PriceTable(DEFAULT_PRICES);
    // gpt-4o-mini-… must not be priced as gpt-4o, whose prefix is shorter.
    expect(table.rates('openai', 'gpt-4o-mini-2024-07-18')).toEqual(toTokenRates(DEFAULT_PRICES['openai:gpt-4o-mini*']!));
    expect(table.rates('openai', 'gpt-4o-2024-08-06')).toEqual(toTokenRates(DEFAULT_PRICES['openai:gpt-4o*']!));
    const exact = new PriceTable({ 'openai:gpt-x*': { input: 1, cachedInput: 1, cacheWrite: 0, output: 1 }, 'openai:gpt-x-long': { input: 2, cachedInput: 2, cacheWrite: 0, output: 2 } });
    expect(exact.rates('openai', 'gpt-x-long')?.input).toBe(2_000_000);
    expect(exact.rates('openai', 'gpt-x-longer')?.input).toBe(1_000_000);
    expect(exact.rates('anthropic', 'gpt-x')).toBeNull();
  });

  it('bills fresh prompt, cache reads, cache writes and completion each at its own price, in exact picodollars', () => {
    // $3 / $0.30 / $3.75 / $15 per million tokens (a Sonnet-like price).
    const rates = toTokenRates({ input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 });
    // 1,000 prompt tokens: 600 read from the cache, 100 written to it, 300 fresh; 200 completion.
    const cost = costPicoUsd(rates, usage({ promptTokens: 1000, cachedTokens: 600, cacheWriteTokens: 100, completionTokens: 200 }));
    expect(cost).toBe(300 * 3_000_000 + 600 * 300_000 + 100 * 3_750_000 + 200 * 15_000_000);
    expect(picoToUsd(cost)).toBeCloseTo(0.004455, 12);
    // OpenAI: cached tokens at the cached price, no cache-write charge.
    const mini = new PriceTable(DEFAULT_PRICES);
    expect(mini.cost('openai', 'gpt-4o-mini', usage({ promptTokens: 100, cachedTokens: 40, completionTokens: 10 }))).toBe(60 * 150_000 + 40 * 75_000 + 10 * 600_000);
  });

  it('has no price for an unknown model, and refuses a price finer than a picodollar per token', () => {
    expect(new PriceTable(DEFAULT_PRICES).cost('openai', 'my-finetune', usage({ promptTokens: 5 }))).toBeNull();
    expect(() => toTokenRates({ input: 0.0000001, cachedInput: 0, cacheWrite: 0, output: 0 })).toThrow(RangeError);
    expect(() => new PriceTable({ 'no-colon': { input: 1, cachedInput: 1, cacheWrite: 0, output: 1 } })).toThrow(RangeError);
  });
});

describe('a price file (LOOPFLEET_PRICES)', () => {
  it('replaces the shipped prices key by key and keeps the others', () => {
    const table = priceTableFromFile({ 'openai:gpt-4o-mini*': { input: 1, cachedInput: 0.5, cacheWrite: 0, output: 2 } }, 'prices.json');
    expect(table.rates('openai', 'gpt-4o-mini')?.input).toBe(1_000_000);
    expect(table.rates('anthropic', 'claude-sonnet-4-5')).toEqual(toTokenRates(DEFAULT_PRICES['anthropic:claude-sonnet-4*']!));
  });

  it('refuses a bad file with config.invalid naming each bad key', () => {
    const bad = () => priceTableFromFile({ 'openai:a': { input: -1, cachedInput: 0, cacheWrite: 0, output: 0 }, nokey: { input: 1, cachedInput: 0, cacheWrite: 0, output: 0 }, 'openai:b': { input: 1 } }, 'p.json');
    expect(bad).toThrow(ConfigInvalidError);
    expect(bad).toThrow(/LOOPFLEET_PRICES: p\.json: .*"openai:a".*"nokey".*"openai:b"/);
    expect(() => priceTableFromFile([], 'p.json')).toThrow(ConfigInvalidError);
  });
});

describe('cost in the loop', () => {
  it('writes each round\'s cost with its usage and sums it into the result and the session stats', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [{ name: 'noop' }], usage: { promptTokens: 100, completionTokens: 10, cachedTokens: 40, totalTokens: 110 } },
      { text: 'done', usage: { promptTokens: 150, completionTokens: 5, totalTokens: 155 } },
    ]);
    const noop = { name: 'noop', description: 'Does nothing', parameters: { type: 'object', properties: {} }, execute: () => 'ok' };
    const harness = new LoopHarness({ llm, tools: [noop] });
    harness.deps.prices = new PriceTable({ 'scripted:*': { input: 2, cachedInput: 1, cacheWrite: 0, output: 8 } });
    await harness.send('go');
    const result = await runChecked(harness);
    const first = 60 * 2_000_000 + 40 * 1_000_000 + 10 * 8_000_000;
    const second = 150 * 2_000_000 + 5 * 8_000_000;
    const rows = await harness.store.getUsageRounds(harness.sessionId, 1);
    expect(rows.map((row) => row.costPicoUsd)).toEqual([first, second]);
    expect(result!.usage).toMatchObject({ costPicoUsd: first + second, costUsd: picoToUsd(first + second) });
    expect(result!.usage.unpricedCalls).toBeUndefined();
    expect((await harness.store.getSession(harness.sessionId))?.stats).toMatchObject({ costPicoUsd: first + second });
  });
});
