import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, it } from 'vitest';
import { CancelledError, LlmBadResponseError, LlmTransientError } from '../../../../src/core/errors/index.js';
import { classifyLlmError, retryAfterMs } from '../../../../src/core/retry/index.js';
import { toLlmError } from '../../../../src/llm/openai/to-llm-error.js';
import { SecretScrubber } from '../../../../src/observability/redaction.js';

const KEY = 'sk-unit-5c0ffee';
const live = () => new AbortController().signal;
const call = (signal = live(), stalled = false) => ({ signal, stalled, idleTimeoutMs: 1000, secrets: new SecretScrubber([KEY]) });

function httpError(status: number, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, { error: { message: 'nope', type: 'x', param: null, code: 'c' } }, undefined, new Headers(headers));
}

describe('toLlmError', () => {
  it('takes the key out of an HTTP error that quotes it, keeping the SDK error, its status and headers', () => {
    const body = { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };
    const error = APIError.generate(401, body, undefined, new Headers({ 'x-request-id': 'req_1' }));
    const converted = toLlmError(error, call()) as APIError;
    expect(converted).toBeInstanceOf(APIError);
    expect(converted.message).toBe('401 Incorrect API key provided: [redacted].');
    expect(JSON.stringify([converted.error, converted.stack])).not.toContain(KEY);
    expect(converted.headers).toBe(error.headers);
    expect(classifyLlmError(converted)).toEqual({ retryable: false, reason: 'http_status', status: 401 });
    const inStream = toLlmError(new APIError(undefined, { message: `bad key ${KEY}`, type: 'invalid_request_error' }, undefined, new Headers()), call()) as Error;
    expect(inStream.message).toBe('the OpenAI stream reported an error: bad key [redacted]');
    expect((inStream.cause as Error).message).not.toContain(KEY);
  });

  it.each([408, 409, 429, 500, 502, 503, 504])('HTTP %i: the SDK error itself, retryable by status', (status) => {
    const error = httpError(status);
    const converted = toLlmError(error, call());
    expect(converted).toBe(error);
    expect(classifyLlmError(converted)).toEqual({ retryable: true, reason: 'http_status', status });
  });

  it.each([400, 401, 403, 404, 422])('HTTP %i: the SDK error itself, not retryable', (status) => {
    expect(classifyLlmError(toLlmError(httpError(status), call()))).toEqual({ retryable: false, reason: 'http_status', status });
  });

  it('keeps the headers readable for retry-after', () => {
    expect(retryAfterMs(toLlmError(httpError(429, { 'retry-after': '2' }), call()))).toBe(2000);
    expect(retryAfterMs(toLlmError(httpError(429, { 'retry-after-ms': '150', 'retry-after': '9' }), call()))).toBe(150);
  });

  it('an aborted caller signal wins over whatever the SDK threw', () => {
    const controller = new AbortController();
    const reason = new CancelledError('user cancel');
    controller.abort(reason);
    expect(toLlmError(new APIUserAbortError(), call(controller.signal))).toBe(reason);
    expect(toLlmError(httpError(500), call(controller.signal))).toBe(reason);
    const plain = new AbortController();
    plain.abort('shutdown');
    const converted = toLlmError(new Error('x'), call(plain.signal));
    expect(converted).toBeInstanceOf(CancelledError);
    expect(classifyLlmError(converted).reason).toBe('cancelled');
  });

  const transients: [string, unknown, string][] = [
    ['a connection error', new APIConnectionError({ cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }), 'connection'],
    ['a timeout', new APIConnectionTimeoutError(), 'timeout'],
    ['a body cut off mid-stream', new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }), 'connection'],
    ['an error event inside the stream', new APIError(undefined, { message: 'server had an error', type: 'server_error' }, undefined, new Headers()), 'stream_error'],
  ];
  it.each(transients)('%s → LlmTransientError with the cause', (_name, error, reason) => {
    const converted = toLlmError(error, call());
    expect(converted).toBeInstanceOf(LlmTransientError);
    expect((converted as LlmTransientError).cause).toBe(error);
    expect((converted as LlmTransientError).details).toMatchObject({ provider: 'openai', reason });
    expect(classifyLlmError(converted)).toMatchObject({ retryable: true, reason: 'typed' });
  });

  it('a stalled stream → LlmTransientError(stalled)', () => {
    const converted = toLlmError(new APIUserAbortError(), call(live(), true));
    expect(converted).toBeInstanceOf(LlmTransientError);
    expect((converted as LlmTransientError).details.reason).toBe('stalled');
  });

  it('a chunk that is not JSON → LlmBadResponseError', () => {
    const syntax = new SyntaxError('Unexpected token n in JSON');
    const converted = toLlmError(syntax, call());
    expect(converted).toBeInstanceOf(LlmBadResponseError);
    expect((converted as LlmBadResponseError).cause).toBe(syntax);
    expect(classifyLlmError(converted)).toMatchObject({ retryable: true, reason: 'typed' });
  });

  it('a loopfleet error passes through', () => {
    const error = new LlmBadResponseError('x');
    expect(toLlmError(error, call())).toBe(error);
  });
});
