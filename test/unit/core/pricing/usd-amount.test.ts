import { describe, expect, it } from 'vitest';
import { formatPicoUsd, picoTextToUsd, usdToPico } from '../../../../src/core/pricing/usd-amount.js';

describe('USD amounts and picodollars', () => {
  it.each([
    [0.01, 10_000_000_000n],
    [0.1, 100_000_000_000n],
    [25, 25_000_000_000_000n],
    [1e-7, 100_000n],
    [1e-12, 1n],
    [0, 0n],
    ['0.01', 10_000_000_000n],
    ['1234567.123456789012', 1_234_567_123_456_789_012n],
    ['0.000000000001', 1n],
    ['1.10', 1_100_000_000_000n],
  ])('reads %s exactly', (value, pico) => {
    expect(usdToPico(value)).toBe(pico);
  });

  it.each([[1e-13], ['0.0000000000001'], [-1], [Number.NaN], [Number.POSITIVE_INFINITY], ['1e5'], ['-0.5'], [' 1'], ['abc'], [null], [{}]])('refuses %s', (value) => {
    expect(usdToPico(value)).toBeNull();
  });

  it.each([
    [0n, '0.00'],
    [1n, '0.000000000001'],
    [10_000_000_000n, '0.01'],
    [7_000_000_000_000_000n, '7000.00'],
    ['12000000000000001', '12000.000000000001'],
    ['9223372036854775807', '9223372.036854775807'],
  ])('formats %s picodollars as exact decimal USD %s', (pico, text) => {
    expect(formatPicoUsd(pico)).toBe(text);
    expect(usdToPico(text)).toBe(BigInt(pico));
  });

  it('gives a USD number for display', () => {
    expect(picoTextToUsd('10000000000')).toBe(0.01);
  });
});
