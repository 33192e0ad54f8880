import { describe, expect, it } from 'vitest';
import { configuredSecrets, loadConfig, urlSecrets } from '../../../src/config/index.js';
import { LlmNonRetryableError } from '../../../src/core/errors/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SecretScrubber } from '../../../src/observability/redaction.js';

const KEY = 'sk-live-7d2e90b1';

describe('SecretScrubber.text', () => {
  it('replaces each secret as written, JSON-escaped and percent-encoded', () => {
    const scrubber = new SecretScrubber([KEY, 'p@ss"w/rd', null, undefined, '']);
    expect(scrubber.text(`Incorrect API key provided: ${KEY}.`)).toBe('Incorrect API key provided: [redacted].');
    expect(scrubber.text(JSON.stringify({ message: 'pw p@ss"w/rd' }))).toBe('{"message":"pw [redacted]"}');
    expect(scrubber.text('redis://:p%40ss%22w%2Frd@cache')).toBe('redis://:[redacted]@cache');
    expect(scrubber.text('nothing here')).toBe('nothing here');
  });

  it('replaces the longest secret first, and never rewrites its own marker', () => {
    const scrubber = new SecretScrubber(['red', 'postgres://u:red@db/app']);
    expect(scrubber.text('connect postgres://u:red@db/app: red alert')).toBe('connect [redacted]: [redacted] alert');
  });

  it('with no secrets, text passes unchanged', () => {
    expect(new SecretScrubber([]).text(KEY)).toBe(KEY);
  });
});

describe('SecretScrubber.error', () => {
  /** An SDK-like HTTP error: a status, headers and the parsed body, the key quoted in its message. */
  class ApiError extends Error {
    readonly status = 401;
    readonly headers = new Headers({ 'x-request-id': 'req_1' });
    readonly error = { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', nested: [{ hint: KEY }] };
  }

  it('returns the error itself when it holds no secret', () => {
    const error = new Error('socket hang up', { cause: new Error('ECONNRESET') });
    expect(new SecretScrubber([KEY]).error(error)).toBe(error);
    expect(new SecretScrubber([KEY]).error('a string')).toBe('a string');
  });

  it('copies an error that holds one: same class and fields, the secret replaced everywhere, the original untouched', () => {
    const original = new ApiError(`401 Incorrect API key provided: ${KEY}`);
    const wrapper = new LlmNonRetryableError(`LLM call failed: ${original.message}`, { cause: original, details: { body: original.error } });
    const copy = new SecretScrubber([KEY]).error(wrapper);
    expect(copy).not.toBe(wrapper);
    expect(copy).toBeInstanceOf(LlmNonRetryableError);
    expect(copy.code).toBe('llm.non_retryable');
    expect(copy.message).toBe('LLM call failed: 401 Incorrect API key provided: [redacted]');
    expect(copy.stack).not.toContain(KEY);
    expect(copy.details).toEqual({ body: { message: 'Incorrect API key provided: [redacted]', type: 'invalid_request_error', nested: [{ hint: '[redacted]' }] } });
    const cause = copy.cause as ApiError;
    expect(cause).toBeInstanceOf(ApiError);
    expect(cause.status).toBe(401);
    expect(cause.headers).toBe(original.headers);
    expect(cause.error.message).toBe('Incorrect API key provided: [redacted]');
    expect(Object.keys(cause)).toEqual(Object.keys(original));
    expect(original.message).toContain(KEY);
    expect(wrapper.message).toContain(KEY);
  });

  it('follows cycles without looping', () => {
    const error = new Error(`key ${KEY}`) as Error & { self?: unknown };
    error.self = { back: error };
    const copy = new SecretScrubber([KEY]).error(error);
    expect(copy.message).toBe('key [redacted]');
    expect((copy.self as { back: unknown }).back).toBe(copy);
  });
});

describe('the secrets of a configuration', () => {
  it('urlSecrets: the password as written and decoded, password parameters, and the URL; nothing without a password', () => {
    expect(urlSecrets('postgres://app:p%40ss@db/app')).toEqual(['postgres://app:p%40ss@db/app', 'p%40ss', 'p@ss']);
    expect(urlSecrets('redis://cache:6379/0?password=a+b%21')).toEqual(['redis://cache:6379/0?password=a+b%21', 'a+b%21', 'a+b!', 'a b!']);
    expect(urlSecrets('redis://127.0.0.1:6379')).toEqual([]);
    expect(urlSecrets(null)).toEqual([]);
    expect(urlSecrets('not a url with pw')).toEqual(['not a url with pw']);
  });

  it('configuredSecrets: both API keys and every URL password', () => {
    const config = loadConfig({
      OPENAI_API_KEY: KEY,
      ANTHROPIC_API_KEY: 'sk-ant-2',
      DATABASE_URL: 'postgres://u:dbpw@db/app',
      REDIS_URL: 'redis://:redispw@cache',
      OPENAI_BASE_URL: 'https://u:proxypw@proxy/v1',
    });
    expect(configuredSecrets(config)).toEqual(expect.arrayContaining([KEY, 'sk-ant-2', 'dbpw', 'redispw', 'proxypw', 'postgres://u:dbpw@db/app']));
    expect(configuredSecrets(loadConfig({ DATABASE_URL: 'postgres://u@db/app' }))).toEqual([]);
  });

  it('configuredSecrets: the documented default password is no secret', () => {
    expect(configuredSecrets(loadConfig({}))).toEqual([]);
    expect(configuredSecrets(loadConfig({ DATABASE_URL: 'postgres://u:s3cret@db/app' }))).toContain('s3cret');
  });

  it('a logger given the secrets takes them out of every logged error', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', format: 'json', redactContent: false, secrets: [KEY, 'dbpw'], destination: { write: (line: string) => void lines.push(line) } });
    logger.error({ err: new Error(`tools module: key ${KEY}`, { cause: Object.assign(new Error('auth failed for dbpw'), { hint: `"${KEY}"` }) }) }, 'worker failed to start');
    expect(lines.join('')).not.toMatch(/sk-live|dbpw/);
    expect(JSON.parse(lines[0]!)).toMatchObject({ err: { message: 'tools module: key [redacted]: auth failed for [redacted]' } });
  });
});
