import type { ModelPrice } from './price-table.js';

/**
 * The prices loopfleet ships with, in USD per million tokens, as the providers published them for
 * these models (OpenAI: cached input at its discount, no cache-write charge; Anthropic: cache reads at
 * a tenth of input, 5-minute cache writes at 1.25×). Prices change: set `LOOPFLEET_PRICES` to a JSON
 * file of your own (docs/prices.md) — its entries replace these key by key. `scripted` (the offline
 * model) is free.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'scripted:*': { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 },
  'openai:gpt-4o-mini*': { input: 0.15, cachedInput: 0.075, cacheWrite: 0, output: 0.6 },
  'openai:gpt-4o*': { input: 2.5, cachedInput: 1.25, cacheWrite: 0, output: 10 },
  'openai:gpt-4.1-nano*': { input: 0.1, cachedInput: 0.025, cacheWrite: 0, output: 0.4 },
  'openai:gpt-4.1-mini*': { input: 0.4, cachedInput: 0.1, cacheWrite: 0, output: 1.6 },
  'openai:gpt-4.1*': { input: 2, cachedInput: 0.5, cacheWrite: 0, output: 8 },
  'openai:gpt-5-nano*': { input: 0.05, cachedInput: 0.005, cacheWrite: 0, output: 0.4 },
  'openai:gpt-5-mini*': { input: 0.25, cachedInput: 0.025, cacheWrite: 0, output: 2 },
  'openai:gpt-5*': { input: 1.25, cachedInput: 0.125, cacheWrite: 0, output: 10 },
  'openai:o4-mini*': { input: 1.1, cachedInput: 0.275, cacheWrite: 0, output: 4.4 },
  'openai:o3-mini*': { input: 1.1, cachedInput: 0.55, cacheWrite: 0, output: 4.4 },
  'openai:o3*': { input: 2, cachedInput: 0.5, cacheWrite: 0, output: 8 },
  'anthropic:claude-opus-4-5*': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 },
  'anthropic:claude-opus-4*': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  'anthropic:claude-sonnet-4*': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic:claude-3-7-sonnet*': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic:claude-haiku-4-5*': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  'anthropic:claude-3-5-haiku*': { input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
  'anthropic:claude-3-haiku*': { input: 0.25, cachedInput: 0.03, cacheWrite: 0.3, output: 1.25 },
});
