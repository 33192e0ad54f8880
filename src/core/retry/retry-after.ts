/**
 * The provider's own "retry after" hint, read from an error's response headers. OpenAI sends
 * `retry-after-ms` (milliseconds) and `retry-after` (seconds); HTTP also allows `retry-after` as a
 * date. The SDKs expose headers as a `Headers` object, adapters may use a plain record, and some
 * errors only carry them on `response.headers`.
 */

/** A `Headers`-like object: anything with `get(name)`. */
interface HeaderGetter {
  get(name: string): string | null | undefined;
}

/**
 * Milliseconds to wait before retrying, as the error's headers ask, or null when they say nothing
 * usable. `retry-after-ms` wins over `retry-after`. A date in the past gives 0.
 *
 * @param nowMs the current time, for an HTTP-date `retry-after`; pass `clock.now()` in the loop.
 */
export function retryAfterMs(error: unknown, nowMs: number = Date.now()): number | null {
  const headers = headersOf(error);
  if (headers === null) return null;
  const millis = parseNumber(readHeader(headers, 'retry-after-ms'));
  if (millis !== null) return Math.round(millis);
  const value = readHeader(headers, 'retry-after');
  if (value === null) return null;
  const seconds = parseNumber(value);
  if (seconds !== null) return Math.round(seconds * 1000);
  // An HTTP date names its month (`Wed, 21 Oct 2015 07:28:00 GMT`); requiring letters keeps
  // Date.parse from reading `-3` or `2` as a year.
  const date = /[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

function headersOf(error: unknown): Record<string, unknown> | null {
  if (!isObject(error)) return null;
  if (isObject(error.headers)) return error.headers;
  const response = error.response;
  if (isObject(response) && isObject(response.headers)) return response.headers;
  return null;
}

/** Header names are case-insensitive; a plain record may spell them any way, or hold an array. */
function readHeader(headers: Record<string, unknown>, name: string): string | null {
  if (typeof headers.get === 'function') {
    const value: unknown = (headers as unknown as HeaderGetter).get(name);
    return typeof value === 'string' ? value : null;
  }
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const first: unknown = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') return first;
    if (typeof first === 'number') return String(first);
  }
  return null;
}

/** A non-negative decimal number, or null. Rejects `''`, `'abc'`, negatives and infinities. */
function parseNumber(value: string | null): number | null {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
