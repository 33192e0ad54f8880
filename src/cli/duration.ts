import { CliUsageError } from './command-line.js';

/** Milliseconds in one of each unit a duration may use. */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^(\d+)(ms|s|m|h|d)?$/;

/**
 * A duration as typed at a terminal: `90s`, `5m`, `2h`, `1d`, `250ms`, or bare digits meaning
 * `bareUnit` (milliseconds unless a command says otherwise). Within `range` (ms), else a
 * {@link CliUsageError} naming the option and what is accepted.
 */
export function parseDuration(option: string, raw: string, range: { min: number; max: number }, bareUnit: keyof typeof UNIT_MS = 'ms'): number {
  const match = DURATION.exec(raw);
  const unit = (match?.[2] ?? bareUnit) as keyof typeof UNIT_MS;
  const value = match === null ? Number.NaN : Number(match[1]) * UNIT_MS[unit];
  if (Number.isSafeInteger(value) && value >= range.min && value <= range.max) return value;
  const problem = match === null ? 'must be a duration such as 90s, 5m, 2h, 1d or 250ms' : `must be from ${formatDuration(range.min)} to ${formatDuration(range.max)}`;
  throw new CliUsageError(`--${option} ${problem}; got ${JSON.stringify(raw)}`);
}

/** The shortest exact form of a duration: `90s`, `5m`, `2h`, `366d`, `1500ms`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
