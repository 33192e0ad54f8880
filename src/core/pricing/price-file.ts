import { z } from 'zod';
import { ConfigInvalidError } from '../errors/index.js';
import { DEFAULT_PRICES } from './default-prices.js';
import { PriceTable, toTokenRates, type ModelPrice } from './price-table.js';

const KEY = /^[a-z0-9_-]+:[^\s]+$/i;

const usdPerMillion = z.number({ error: 'must be a number (USD per million tokens)' }).nonnegative({ error: 'must not be negative' });

/** One entry of a price file: all four prices, nothing else (a typo must not price a model at 0). */
const modelPriceSchema = z
  .object({ input: usdPerMillion, cachedInput: usdPerMillion, cacheWrite: usdPerMillion, output: usdPerMillion })
  .strict();

/**
 * The price table of a price file's content (`LOOPFLEET_PRICES`, docs/prices.md): a JSON object
 * `{ "provider:model": { input, cachedInput, cacheWrite, output } }`, USD per million tokens, a key
 * ending in `*` a prefix. Its entries replace the shipped ones ({@link DEFAULT_PRICES}) key by key;
 * the others stay. Anything wrong — not an object, a key that is not `provider:model`, a missing,
 * negative or unknown field, a price finer than 6 decimals — is `config.invalid` naming each bad
 * key; nothing is half-applied.
 */
export function priceTableFromFile(content: unknown, source: string): PriceTable {
  const problems: string[] = [];
  const entries: Record<string, ModelPrice> = {};
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    problems.push('must be a JSON object of "provider:model" keys');
  } else {
    for (const [key, value] of Object.entries(content as Record<string, unknown>)) {
      const problem = entryProblem(key, value);
      if (problem === null) entries[key] = value as ModelPrice;
      else problems.push(`${JSON.stringify(key)}: ${problem}`);
    }
  }
  if (problems.length > 0) {
    throw new ConfigInvalidError(`LOOPFLEET_PRICES: ${source}: ${problems.join('; ')}`, { details: { variables: ['LOOPFLEET_PRICES'] } });
  }
  return new PriceTable(Object.assign({}, DEFAULT_PRICES, entries));
}

/** What is wrong with one entry, or null. */
function entryProblem(key: string, value: unknown): string | null {
  if (!KEY.test(key)) return 'the key must be provider:model (a trailing * makes it a prefix)';
  const parsed = modelPriceSchema.safeParse(value);
  if (!parsed.success) {
    return parsed.error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')} ${issue.message}` : issue.message)).join(', ');
  }
  try {
    toTokenRates(parsed.data);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return null;
}
