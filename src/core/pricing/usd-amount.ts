/**
 * USD amounts at the edges (budget limits, report cells) to and from picodollars (10^-12 USD), the
 * integers every amount is kept in inside. Exact both ways: a USD amount with more than 12 decimals
 * has no picodollar value and is refused rather than rounded.
 */

const PICO_DIGITS = 12;
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;
const EXPONENT = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/;

/**
 * A non-negative USD amount — a number, or decimal text such as `"0.01"` — as picodollars; null when
 * it is not one (negative, not finite, exponent text, more than 12 decimals). A number is read as the
 * shortest decimal that names it (`0.1` is 0.1, not the binary double's expansion).
 */
export function usdToPico(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? numberText(String(value)) : null;
  if (typeof value !== 'string' || value.length > 64) return null;
  const match = DECIMAL.exec(value);
  return match === null ? null : scaled(match[1]!, match[2] ?? '', 0);
}

/** Picodollars as exact decimal USD text: at least 2 decimals, no trailing zeros past them (`"0.01"`, `"0.000000012345"`). */
export function formatPicoUsd(pico: bigint | string): string {
  const value = typeof pico === 'bigint' ? pico : BigInt(pico);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(PICO_DIGITS + 1, '0');
  const whole = digits.slice(0, -PICO_DIGITS);
  const fraction = digits.slice(-PICO_DIGITS).replace(/0+$/, '').padEnd(2, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/** Picodollars (integer text, as sums come from SQL) as a USD number, for display and JSON. */
export function picoTextToUsd(pico: string): number {
  return Number(pico) / 10 ** PICO_DIGITS;
}

/** `String(number)`: plain decimals, or `1e-7` / `1.5e+21` for the very small and very large. */
function numberText(text: string): bigint | null {
  const plain = DECIMAL.exec(text);
  if (plain !== null) return scaled(plain[1]!, plain[2] ?? '', 0);
  const exp = EXPONENT.exec(text);
  return exp === null ? null : scaled(exp[1]!, exp[2] ?? '', Number(exp[3]));
}

/** `whole.fraction × 10^exponent` in picodollars, or null when a digit would fall below a picodollar. */
function scaled(whole: string, fraction: string, exponent: number): bigint | null {
  const shift = PICO_DIGITS + exponent - fraction.length;
  const digits = BigInt(`${whole}${fraction}`);
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  const divisor = 10n ** BigInt(-shift);
  return digits % divisor === 0n ? digits / divisor : null;
}
