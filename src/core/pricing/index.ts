/** Model prices and what a call costs (docs/prices.md). */
export { DEFAULT_PRICES } from './default-prices.js';
export { costPicoUsd, picoToUsd, PICO_PER_USD, PriceTable, toTokenRates, type ModelPrice, type TokenRates } from './price-table.js';
export { priceTableFromFile } from './price-file.js';
