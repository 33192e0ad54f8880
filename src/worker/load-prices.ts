import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigInvalidError, thrownText } from '../core/errors/index.js';
import { DEFAULT_PRICES, PriceTable, priceTableFromFile } from '../core/pricing/index.js';

/**
 * The worker's price table, built once at start-up: the shipped prices, with the entries of the
 * `LOOPFLEET_PRICES` JSON file (when set) replacing them key by key. A file that cannot be read or
 * parsed, or a bad entry, stops start-up with `config.invalid` before any connection is opened (I8).
 */
export async function loadPrices(path: string | null): Promise<PriceTable> {
  if (path === null) return new PriceTable(DEFAULT_PRICES);
  let content: unknown;
  try {
    content = JSON.parse(await readFile(resolve(path), 'utf8')) as unknown;
  } catch (error) {
    throw new ConfigInvalidError(`LOOPFLEET_PRICES: ${path}: cannot read it as JSON: ${thrownText(error) ?? 'unknown error'}`, {
      cause: error,
      details: { variables: ['LOOPFLEET_PRICES'] },
    });
  }
  return priceTableFromFile(content, path);
}
