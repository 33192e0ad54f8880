import type { LlmUsage } from '../ports/llm.js';

/**
 * What one model costs, in USD per million tokens, as providers publish prices: `input` for prompt
 * tokens read fresh, `cachedInput` for prompt tokens read from the provider's cache, `cacheWrite`
 * for prompt tokens written to it (Anthropic), `output` for completion tokens (reasoning included).
 */
export interface ModelPrice {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
}

/** A {@link ModelPrice} as integers: picodollars (10^-12 USD) per token, so every cost is exact. */
export interface TokenRates {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
}

/** Picodollars in one USD. */
export const PICO_PER_USD = 1_000_000_000_000;

/** USD per million tokens → picodollars per token: the same digits, times 10^6. */
export function toTokenRates(price: ModelPrice): TokenRates {
  return { input: rate(price.input), cachedInput: rate(price.cachedInput), cacheWrite: rate(price.cacheWrite), output: rate(price.output) };
}

function rate(usdPerMillion: number): number {
  const scaled = usdPerMillion * 1_000_000;
  const rounded = Math.round(scaled);
  // Six decimals of a dollar per million tokens is a picodollar per token: anything finer is lost.
  if (!Number.isFinite(scaled) || rounded < 0 || Math.abs(scaled - rounded) > 1e-6 * Math.max(1, rounded)) {
    throw new RangeError(`a price must be a non-negative number of USD per million tokens with at most 6 decimals (got ${usdPerMillion})`);
  }
  return rounded;
}

/**
 * One call's cost in picodollars: the prompt's fresh, cache-read and cache-write parts and the
 * completion, each at its rate (`promptTokens` includes the cached and cache-write parts; see
 * `LlmUsage`). An integer, exact as long as it stays below 2^53 (about $9,000 for one call).
 */
export function costPicoUsd(rates: TokenRates, usage: LlmUsage): number {
  const fresh = Math.max(0, usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens);
  return fresh * rates.input + usage.cachedTokens * rates.cachedInput + usage.cacheWriteTokens * rates.cacheWrite + usage.completionTokens * rates.output;
}

/** Picodollars as USD, for display and JSON (exact sums stay in picodollars). */
export function picoToUsd(pico: number): number {
  return pico / PICO_PER_USD;
}

/**
 * Prices by `provider:model`. A key ending in `*` is a prefix: `openai:gpt-4o-mini*` prices the
 * dated snapshots the API reports (`gpt-4o-mini-2024-07-18`). An exact key wins, then the longest
 * prefix. A model with no price costs nothing recorded (`null`): see docs/prices.md.
 */
export class PriceTable {
  readonly #exact = new Map<string, TokenRates>();
  readonly #prefixes: { prefix: string; rates: TokenRates }[] = [];

  constructor(prices: Readonly<Record<string, ModelPrice>>) {
    for (const [key, price] of Object.entries(prices)) {
      if (!/^[a-z0-9_-]+:[^\s]+$/i.test(key)) throw new RangeError(`price key ${JSON.stringify(key)} is not provider:model`);
      const rates = toTokenRates(price);
      if (key.endsWith('*')) this.#prefixes.push({ prefix: key.slice(0, -1), rates });
      else this.#exact.set(key, rates);
    }
    this.#prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The rates of `provider:model`, or null when the table has no price for it. */
  rates(provider: string, model: string): TokenRates | null {
    const key = `${provider}:${model}`;
    const exact = this.#exact.get(key);
    if (exact !== undefined) return exact;
    return this.#prefixes.find((entry) => key.startsWith(entry.prefix))?.rates ?? null;
  }

  /** One call's cost in picodollars, or null when the model has no price. */
  cost(provider: string, model: string, usage: LlmUsage): number | null {
    const rates = this.rates(provider, model);
    return rates === null ? null : costPicoUsd(rates, usage);
  }
}
