import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  InputInvalidError,
  LlmNonRetryableError,
  LlmTimeoutError,
  LlmTransientError,
  OutputInvalidError,
} from '../../../../src/core/errors/index.js';
import { classifyLlmError, httpStatusOf, retryAfterMs } from '../../../../src/core/retry/index.js';

/** An SDK-like error: an Error with extra fields, as the OpenAI and Anthropic SDKs throw. */
function sdkError(fields: Record<string, unknown>, name = 'APIError'): Error {
  const error = Object.assign(new Error(`sdk error ${JSON.stringify(fields)}`), fields);
  error.name = name;
  return error;
}

class APIConnectionError extends Error {
  override name = 'APIConnectionError';
}

describe('classifyLlmError', () => {
  const cases: [string, unknown, boolean, string][] = [
    ['HTTP 408', sdkError({ status: 408 }), true, 'http_status'],
    ['HTTP 409', sdkError({ status: 409 }), true, 'http_status'],
    ['HTTP 429', sdkError({ status: 429 }), true, 'http_status'],
    ['HTTP 500', sdkError({ status: 500 }), true, 'http_status'],
    ['HTTP 503', sdkError({ status: 503 }), true, 'http_status'],
    ['HTTP 529 (Anthropic overloaded)', sdkError({ status: 529 }), true, 'http_status'],
    ['HTTP 400', sdkError({ status: 400 }), false, 'http_status'],
    ['HTTP 401', sdkError({ status: 401 }), false, 'http_status'],
    ['HTTP 402 (balance)', sdkError({ status: 402 }), false, 'http_status'],
    ['HTTP 403', sdkError({ status: 403 }), false, 'http_status'],
    ['HTTP 404', sdkError({ status: 404 }), false, 'http_status'],
    ['HTTP 422', sdkError({ status: 422 }), false, 'http_status'],
    // Redirects are not followed: a wrong base URL, which no retry fixes.
    ['HTTP 308', sdkError({ status: 308 }), false, 'http_status'],
    ['HTTP 301', sdkError({ status: 301 }), false, 'http_status'],
    ['statusCode 401', sdkError({ statusCode: 401 }), false, 'http_status'],
    ['response.status 404', sdkError({ response: { status: 404 } }), false, 'http_status'],
    ['response.status 502', sdkError({ response: { status: 502 } }), true, 'http_status'],
    ['a numeric string status', sdkError({ status: '429' }), true, 'http_status'],
    ['code ECONNRESET', sdkError({ code: 'ECONNRESET' }, 'Error'), true, 'connection'],
    ['code ECONNREFUSED', sdkError({ code: 'ECONNREFUSED' }, 'Error'), true, 'connection'],
    ['code ETIMEDOUT', sdkError({ code: 'ETIMEDOUT' }, 'Error'), true, 'connection'],
    ['code EPIPE', sdkError({ code: 'EPIPE' }, 'Error'), true, 'connection'],
    ['code UND_ERR_SOCKET', sdkError({ code: 'UND_ERR_SOCKET' }, 'Error'), true, 'connection'],
    ['fetch failed with a socket cause', new TypeError('fetch failed', { cause: { code: 'UND_ERR_SOCKET' } }), true, 'connection'],
    ['APIConnectionError', new APIConnectionError('Connection error.'), true, 'connection'],
    ['APIConnectionTimeoutError', sdkError({}, 'APIConnectionTimeoutError'), true, 'connection'],
    ['LlmTransientError', new LlmTransientError('flaky'), true, 'typed'],
    ['LlmTimeoutError from the adapter', new LlmTimeoutError('slow'), true, 'typed'],
    ['LlmNonRetryableError', new LlmNonRetryableError('no'), false, 'typed'],
    ['OutputInvalidError', new OutputInvalidError('garbled'), false, 'typed'],
    ['InputInvalidError', new InputInvalidError('bad'), false, 'typed'],
    ['CancelledError', new CancelledError('stop'), false, 'cancelled'],
    ['an unknown Error', new Error('???'), true, 'unknown'],
    ['a thrown string', 'boom', true, 'unknown'],
    ['a thrown null', null, true, 'unknown'],
    ['a status outside HTTP', sdkError({ status: 42 }), true, 'unknown'],
  ];

  const titled = cases.map(([name, error, retryable, reason]) => [name, retryable, reason, error] as const);
  it.each(titled)('%s → retryable %s (%s)', (_name, retryable, reason, error) => {
    expect(classifyLlmError(error)).toMatchObject({ retryable, reason });
  });

  it('reports the status it found', () => {
    expect(classifyLlmError(sdkError({ status: 429 })).status).toBe(429);
    expect(httpStatusOf(sdkError({ response: { statusCode: 503 } }))).toBe(503);
    expect(httpStatusOf(new Error('x'))).toBeNull();
  });

  it('survives a cyclic cause chain', () => {
    const error = sdkError({}, 'Error') as Error & { cause?: unknown };
    error.cause = error;
    expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'unknown' });
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it.each([
    ['retry-after-ms from a Headers object', { headers: new Headers({ 'retry-after-ms': '1500' }) }, 1500],
    ['retry-after seconds from a Headers object', { headers: new Headers({ 'retry-after': '2' }) }, 2000],
    ['retry-after-ms wins over retry-after', { headers: new Headers({ 'retry-after': '9', 'retry-after-ms': '250' }) }, 250],
    ['a plain record, any case', { headers: { 'Retry-After': '3' } }, 3000],
    ['a plain record with an array value', { headers: { 'retry-after': ['4'] } }, 4000],
    ['a numeric value in a record', { headers: { 'retry-after-ms': 700 } }, 700],
    ['fractional seconds', { headers: { 'retry-after': '1.5' } }, 1500],
    ['response.headers', { response: { headers: new Headers({ 'retry-after': '5' }) } }, 5000],
    ['an HTTP date', { headers: { 'retry-after': new Date(now + 7000).toUTCString() } }, 7000],
    ['an HTTP date in the past', { headers: { 'retry-after': new Date(now - 7000).toUTCString() } }, 0],
  ])('reads %s', (_name, error, expected) => {
    expect(retryAfterMs(error, now)).toBe(expected);
  });

  it.each([
    ['no headers', new Error('x')],
    ['no retry headers', { headers: { 'content-type': 'application/json' } }],
    ['garbage', { headers: { 'retry-after': 'soon' } }],
    ['a negative number', { headers: { 'retry-after': '-3' } }],
    ['an empty value', { headers: { 'retry-after-ms': '' } }],
    ['null', null],
    ['a string', 'boom'],
  ])('gives null for %s', (_name, error) => {
    expect(retryAfterMs(error, now)).toBeNull();
  });

  it('falls back to retry-after when retry-after-ms is unusable', () => {
    expect(retryAfterMs({ headers: { 'retry-after-ms': 'x', 'retry-after': '2' } }, now)).toBe(2000);
  });
});
