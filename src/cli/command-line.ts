import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * A bad command line found after `parseArgs` accepted it (a repeated option, a malformed number).
 * `runCli` reports it like a `parseArgs` error: the message on stderr, exit code 2.
 */
export class CliUsageError extends Error {
  readonly code = 'ERR_CLI_USAGE';
}

/**
 * `parseArgs`, strict, and rejecting an option given more than once: `parseArgs` alone keeps the
 * last value, so `--mode queue --mode steer` would silently run as `steer`. Every command parses
 * its arguments here (always strict: an unknown option is an error too).
 */
export function parseCommandLine<T extends ParseArgsConfig & { strict?: never; tokens?: never }>(config: T) {
  // Returned whole: destructuring the generic result here would widen the callers' value types
  // (and TypeScript cannot see through it that `tokens: true` makes `tokens` present).
  const parsed = parseArgs<T & { strict: true; tokens: true }>(Object.assign({}, config, { strict: true as const, tokens: true as const }));
  const seen = new Set<string>();
  for (const token of parsed.tokens!) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new CliUsageError(`option --${token.name} given more than once`);
    seen.add(token.name);
  }
  return parsed;
}

/**
 * A whole-number option value: decimal digits only (no sign, spaces, `0x`, exponent or fraction)
 * and within `min..max`; anything else is a {@link CliUsageError} naming the option and the range.
 */
export function parseIntegerOption(option: string, raw: string, range: { min: number; max: number; unit?: string }): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (value >= range.min && value <= range.max) return value;
  const unit = range.unit === undefined ? '' : ` ${range.unit}`;
  throw new CliUsageError(`--${option} must be a whole number from ${range.min} to ${range.max}${unit} (decimal digits only); got ${JSON.stringify(raw)}`);
}
