import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { CancelledError, LlmBadResponseError, LlmNonRetryableError, LlmTransientError } from '../../../../src/core/errors/index.js';
import { classifyLlmError, retryAfterMs } from '../../../../src/core/retry/index.js';
import {
  AnthropicStreamRejectedError,
  AnthropicStreamTransientError,
  fromStreamErrorEvent,
  isStreamErrorEvent,
  mapCallError,
} from '../../../../src/llm/anthropic/index.js';
import { SecretScrubber } from '../../../../src/observability/redaction.js';

const KEY = 'sk-ant-unit-7e1d';
const SECRETS = new SecretScrubber([KEY]);

/** The SDK error an in-stream `event: error` becomes (status undefined, the 200 response's headers). */
function streamErrorEvent(type: string, message = 'boom'): APIError {
  const body = { type: 'error', error: { type, message } };
  return new APIError(undefined, body, undefined, new Headers({ 'request-id': 'req_1' }), undefined);
}

const live = () => new AbortController().signal;

describe('in-stream error events', () => {
  const cases: [string, number | null, boolean][] = [
    ['overloaded_error', 529, true],
    ['rate_limit_error', 429, true],
    ['api_error', 500, true],
    ['timeout_error', 504, true],
    ['something_new', null, true],
    ['invalid_request_error', 400, false],
    ['authentication_error', 401, false],
    ['permission_error', 403, false],
    ['not_found_error', 404, false],
    ['request_too_large', 413, false],
  ];
  it.each(cases)('%s → status %s, retryable %s', (type, status, retryable) => {
    const sdkError = streamErrorEvent(type);
    expect(isStreamErrorEvent(sdkError)).toBe(true);
    const error = fromStreamErrorEvent(sdkError);
    expect(error).toBeInstanceOf(retryable ? AnthropicStreamTransientError : AnthropicStreamRejectedError);
    expect(error).toBeInstanceOf(retryable ? LlmTransientError : LlmNonRetryableError);
    expect(error).toMatchObject({ errorType: type, status, retryable, cause: sdkError });
    expect(error.details).toEqual({ provider: 'anthropic', errorType: type, status, requestId: 'req_1' });
    expect(error.message).toBe(`Anthropic stream error ${type}: boom`);
    expect(classifyLlmError(error)).toEqual({ retryable, reason: 'typed', status });
  });

  it('is not confused with connection errors, aborts or HTTP errors', () => {
    expect(isStreamErrorEvent(new APIConnectionError({ message: 'down' }))).toBe(false);
    expect(isStreamErrorEvent(new APIConnectionTimeoutError())).toBe(false);
    expect(isStreamErrorEvent(new APIUserAbortError())).toBe(false);
    expect(isStreamErrorEvent(APIError.generate(529, { type: 'error' }, undefined, new Headers()))).toBe(false);
    expect(isStreamErrorEvent(new Error('x'))).toBe(false);
  });
});

describe('mapCallError', () => {
  it('takes the key out of an HTTP error that quotes it, keeping the SDK error, its status and headers', () => {
    const error = APIError.generate(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` } }, undefined, new Headers({ 'request-id': 'req_1' }));
    const mapped = mapCallError(error, live(), SECRETS) as APIError;
    expect(mapped).toBeInstanceOf(APIError);
    expect(mapped.message).not.toContain(KEY);
    expect(mapped.message).toContain('invalid x-api-key [redacted]');
    expect(JSON.stringify([mapped.error, mapped.stack])).not.toContain(KEY);
    expect(mapped.headers).toBe(error.headers);
    expect(classifyLlmError(mapped)).toEqual({ retryable: false, reason: 'http_status', status: 401 });
    expect((mapCallError(streamErrorEvent('invalid_request_error', `key ${KEY}`), live(), SECRETS) as Error).message).not.toContain(KEY);
  });

  it('turns anything into the signal reason once the signal aborted', () => {
    const controller = new AbortController();
    const reason = new CancelledError('user cancel');
    controller.abort(reason);
    expect(mapCallError(new APIUserAbortError(), controller.signal, SECRETS)).toBe(reason);
    const plain = new AbortController();
    plain.abort('shutdown');
    const mapped = mapCallError(new Error('x'), plain.signal, SECRETS);
    expect(mapped).toBeInstanceOf(CancelledError);
    expect((mapped as CancelledError).message).toBe('shutdown');
  });

  it('passes HTTP errors through with their status and headers', () => {
    const error = APIError.generate(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, undefined, new Headers({ 'retry-after': '3' }));
    expect(mapCallError(error, live(), SECRETS)).toBe(error);
    expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'http_status', status: 429 });
    expect(retryAfterMs(error)).toBe(3000);
  });

  it('passes connection errors through by name', () => {
    const error = new APIConnectionError({ message: 'Connection error.', cause: new TypeError('fetch failed') });
    expect(mapCallError(error, live(), SECRETS)).toBe(error);
    expect(classifyLlmError(error)).toMatchObject({ retryable: true, reason: 'connection' });
  });

  it('turns a SyntaxError (data that is not JSON) into llm.bad_response', () => {
    const cause = new SyntaxError('Unexpected end of JSON input');
    const mapped = mapCallError(cause, live(), SECRETS);
    expect(mapped).toBeInstanceOf(LlmBadResponseError);
    expect(mapped).toMatchObject({ code: 'llm.bad_response', retryable: true, cause });
  });

  it('keeps loopfleet errors and types stream error events', () => {
    const bad = new LlmBadResponseError('x');
    expect(mapCallError(bad, live(), SECRETS)).toBe(bad);
    expect(mapCallError(streamErrorEvent('overloaded_error'), live(), SECRETS)).toBeInstanceOf(AnthropicStreamTransientError);
  });
});
