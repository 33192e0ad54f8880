import { InputInvalidError } from '../core/errors/index.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** A long-poll `?wait=` value (`30s`, `500ms`, `1m`; a bare number is seconds) in milliseconds, at most `maxMs`. */
export function parseWait(value: string, maxMs: number): number {
  const match = /^(\d{1,9})(ms|s|m)?$/.exec(value.trim());
  if (match === null) throw new InputInvalidError(`wait must be a duration like 30s, 500ms or 1m (got ${JSON.stringify(value.slice(0, 32))})`);
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 's']!;
  if (ms > maxMs) throw new InputInvalidError(`wait must be at most ${maxMs} ms (GATEWAY_MAX_WAIT_MS)`, { details: { maxMs } });
  return ms;
}
