import { Writable } from 'node:stream';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { ReplyError } from 'ioredis';
import { DatabaseError } from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { storeFailure } from '../../../src/core/ports/guard-store.js';
import { createLogger, loggerFromConfig, type Logger, type LoggerOptions } from '../../../src/observability/logger.js';

const API_KEY = 'sk-live-0123456789abcdef';

/** A pino destination that keeps every line, parsed. pino writes to plain objects synchronously. */
function memoryDestination() {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
}

function jsonLogger(options: Partial<LoggerOptions> = {}): { logger: Logger; lines: Record<string, unknown>[] } {
  const destination = memoryDestination();
  const logger = createLogger({ level: 'info', format: 'json', redactContent: true, destination, ...options });
  return { logger, lines: destination.lines };
}

describe('createLogger redaction of secrets', () => {
  it('redacts API keys, authorization and x-api-key headers at the top level', () => {
    const { logger, lines } = jsonLogger();
    logger.info(
      {
        apiKey: API_KEY,
        api_key: API_KEY,
        authorization: `Bearer ${API_KEY}`,
        password: 'hunter2',
        OPENAI_API_KEY: API_KEY,
        ANTHROPIC_API_KEY: API_KEY,
        headers: { authorization: `Bearer ${API_KEY}`, 'x-api-key': API_KEY, accept: 'application/json' },
      },
      'calling provider',
    );
    expect(lines[0]).toMatchObject({
      msg: 'calling provider',
      apiKey: '[redacted]',
      api_key: '[redacted]',
      authorization: '[redacted]',
      password: '[redacted]',
      OPENAI_API_KEY: '[redacted]',
      ANTHROPIC_API_KEY: '[redacted]',
      headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'application/json' },
    });
    expect(JSON.stringify(lines)).not.toContain(API_KEY);
  });

  it('redacts the same keys one level down', () => {
    const { logger, lines } = jsonLogger({ redactContent: false });
    logger.info({
      llm: { apiKey: API_KEY, api_key: API_KEY, model: 'gpt-4o-mini' },
      request: { authorization: API_KEY, headers: { authorization: API_KEY, 'x-api-key': API_KEY } },
      db: { password: 'hunter2' },
      env: { OPENAI_API_KEY: API_KEY, ANTHROPIC_API_KEY: API_KEY },
    });
    expect(lines[0]).toMatchObject({
      llm: { apiKey: '[redacted]', api_key: '[redacted]', model: 'gpt-4o-mini' },
      request: { authorization: '[redacted]', headers: { authorization: '[redacted]', 'x-api-key': '[redacted]' } },
      db: { password: '[redacted]' },
      env: { OPENAI_API_KEY: '[redacted]', ANTHROPIC_API_KEY: '[redacted]' },
    });
    expect(JSON.stringify(lines)).not.toContain(API_KEY);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});

describe('createLogger redaction of contents', () => {
  const fields = {
    content: 'my secret plan',
    input: 'user prompt',
    messages: [{ role: 'user', content: 'hello' }],
    finalText: 'the answer',
    text: 'a delta',
    arguments: '{"path":"/etc"}',
    args: { path: '/etc' },
    output: 'file contents',
    toolCall: { name: 'read_file', arguments: '{"path":"/etc"}', args: { path: '/etc' }, output: 'x' },
    message: { role: 'assistant', content: 'nested reply', text: 'nested text' },
    result: { finalText: 'nested answer', input: 'nested input', messages: [] },
  };

  it('redacts message contents by default, at the top level and one level down', () => {
    const { logger, lines } = jsonLogger();
    logger.info({ sessionId: 'sess-1', ...fields }, 'round finished');
    const line = lines[0];
    for (const key of ['content', 'input', 'messages', 'finalText', 'text', 'arguments', 'args', 'output']) {
      expect(line?.[key], key).toBe('[redacted]');
    }
    expect(line).toMatchObject({
      sessionId: 'sess-1',
      msg: 'round finished',
      toolCall: { name: 'read_file', arguments: '[redacted]', args: '[redacted]', output: '[redacted]' },
      message: { role: 'assistant', content: '[redacted]', text: '[redacted]' },
      result: { finalText: '[redacted]', input: '[redacted]', messages: '[redacted]' },
    });
  });

  it('shows message contents when redactContent is false, still hiding keys', () => {
    const { logger, lines } = jsonLogger({ redactContent: false });
    logger.info({ ...fields, apiKey: API_KEY });
    expect(lines[0]).toMatchObject({ ...fields, apiKey: '[redacted]' });
  });
});

describe('createLogger: what a failed statement carries of users\' data', () => {
  const SECRET = 'my private system prompt';
  const SQL = 'insert into "sessions" ("id", "system_prompt") values ($1, $2)';

  /** pg's own error for a CHECK violation: the failing row, contents and all, in `detail`. */
  function checkViolation(): DatabaseError {
    const error = new DatabaseError('new row for relation "sessions" violates check constraint "sessions_prompt_check"', 120, 'error');
    return Object.assign(error, { code: '23514', detail: `Failing row contains (s1, ${SECRET}, {}).`, table: 'sessions' });
  }

  it('keeps the SQL and the database\'s words but not the parameters or the failing row, wherever pino repeats them', () => {
    const { logger, lines } = jsonLogger();
    const wrapped = new DrizzleQueryError(SQL, ['s1', SECRET], checkViolation());
    logger.warn({ err: storeFailure('createSession', wrapped) }, 'store call failed');
    logger.warn({ err: wrapped }, 'the wrapper itself');
    logger.warn({ err: new AggregateError([wrapped], 'several failed') }, 'inside an aggregate');
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    const [guarded, raw, aggregate] = lines.map((line) => line['err'] as Record<string, unknown>);
    expect(guarded?.['message']).toBe(
      `store createSession failed: new row for relation "sessions" violates check constraint "sessions_prompt_check" (SQLSTATE 23514): Failed query: ${SQL}\nparams: [redacted]: new row for relation "sessions" violates check constraint "sessions_prompt_check"`,
    );
    expect(guarded?.['stack']).toEqual(expect.stringContaining(`caused by: Error: Failed query: ${SQL}\nparams: [redacted]`));
    expect(raw).toMatchObject({ type: 'DrizzleQueryError', query: SQL, params: '[redacted]' });
    expect(aggregate?.['aggregateErrors']).toEqual([expect.objectContaining({ query: SQL, params: '[redacted]' })]);
  });

  it('the failing row of a driver error logged on its own is redacted; other details stay', () => {
    const { logger, lines } = jsonLogger();
    logger.warn({ err: checkViolation() });
    logger.warn({ err: Object.assign(new DatabaseError('duplicate key value violates unique constraint "inputs_pkey"', 90, 'error'), { code: '23505', detail: 'Key (session_id, seq)=(s1, 4) already exists.' }) });
    expect(lines[0]?.['err']).toMatchObject({ code: '23514', detail: 'Failing row contains [redacted]', table: 'sessions' });
    expect(lines[1]?.['err']).toMatchObject({ code: '23505', detail: 'Key (session_id, seq)=(s1, 4) already exists.' });
  });

  it('the original error is left as it was, and errors that carry nothing are pino\'s serialisation unchanged', () => {
    const { logger, lines } = jsonLogger();
    const wrapped = new DrizzleQueryError(SQL, ['s1', SECRET], checkViolation());
    logger.warn({ err: wrapped });
    expect(wrapped.message).toContain(SECRET);
    expect(wrapped.params).toEqual(['s1', SECRET]);
    // Not a connection failure: those lose their stacks (connection-trouble.test.ts).
    const plain = Object.assign(new Error('is a directory', { cause: new Error('EISDIR') }), { code: 'EISDIR' });
    logger.warn({ err: plain });
    expect(lines[1]?.['err']).toEqual({ type: 'Error', message: 'is a directory: EISDIR', stack: expect.stringContaining('caused by: Error: EISDIR') as unknown, code: 'EISDIR' });
  });

  it('with LOG_CONTENT on (redactContent false) the statement is logged whole, parameters included', () => {
    const { logger, lines } = jsonLogger({ redactContent: false });
    logger.warn({ err: new DrizzleQueryError(SQL, ['s1', SECRET], checkViolation()) });
    expect(lines[0]?.['err']).toMatchObject({ params: ['s1', SECRET], message: expect.stringContaining(SECRET) as unknown });
  });
});

describe('createLogger: a failed Redis command', () => {
  const PASSWORD = 'redis-pass-6f1d';

  /** ioredis's error for a refused AUTH: the command, password included, on the error. */
  function refusedAuth(): Error {
    return Object.assign(new ReplyError('WRONGPASS invalid username-password pair or user is disabled.'), { command: { name: 'auth', args: ['lf', PASSWORD] } });
  }

  it.each([true, false])('drops the arguments of every command, nested ones too, keeping its name (redactContent %s)', (redactContent) => {
    const { logger, lines } = jsonLogger({ redactContent });
    logger.warn({ err: refusedAuth() }, 'redis connection error');
    // A transaction's EXECABORT keeps the errors of its queued commands; a wrapper keeps its cause.
    const execAbort = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
      command: { name: 'exec', args: [] },
      previousErrors: [refusedAuth(), Object.assign(new Error('ERR wrong number of arguments'), { command: { name: 'set', args: ['key', PASSWORD] } })],
    });
    logger.warn({ err: execAbort });
    logger.error({ err: new Error('worker failed to start', { cause: refusedAuth() }) });
    expect(JSON.stringify(lines)).not.toContain(PASSWORD);
    expect(lines[0]?.['err']).toMatchObject({ type: 'ReplyError', message: expect.stringContaining('WRONGPASS') as unknown, command: { name: 'auth' } });
    expect((lines[0]?.['err'] as { command: object }).command).toEqual({ name: 'auth' });
    expect(lines[1]?.['err']).toMatchObject({
      command: { name: 'exec' },
      previousErrors: [
        { type: 'ReplyError', message: expect.stringContaining('WRONGPASS') as unknown, command: { name: 'auth' } },
        { type: 'Error', message: 'ERR wrong number of arguments', command: { name: 'set' } },
      ],
    });
  });
});

describe('createLogger output', () => {
  it('serializes errors under err with type, message, stack and own fields', () => {
    const { logger, lines } = jsonLogger();
    const error = new ConfigInvalidError('bad config', { details: { variables: ['X'] } });
    logger.error({ err: error }, 'start-up failed');
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'start-up failed',
      err: { type: 'ConfigInvalidError', message: 'bad config', code: 'config.invalid', details: { variables: ['X'] } },
    });
    expect((lines[0]?.['err'] as { stack: unknown }).stack).toEqual(expect.stringContaining('bad config'));
  });

  it('gives child loggers their bindings', () => {
    const { logger, lines } = jsonLogger({ name: 'worker' });
    const child = logger.child({ sessionId: 'sess-1', jobId: '42' }).child({ inputSeq: 3 });
    child.info('input started');
    expect(lines[0]).toMatchObject({ name: 'worker', sessionId: 'sess-1', jobId: '42', inputSeq: 3, msg: 'input started' });
  });

  it('drops lines below the level', () => {
    const { logger, lines } = jsonLogger({ level: 'warn' });
    logger.debug('no');
    logger.info('no');
    logger.warn('yes');
    logger.error('yes too');
    expect(lines.map((line) => line['msg'])).toEqual(['yes', 'yes too']);
  });

  it('writes nothing at level silent', () => {
    const { logger, lines } = jsonLogger({ level: 'silent' });
    logger.fatal('nothing');
    expect(lines).toEqual([]);
  });

  it('writes human-readable, uncoloured lines in pretty format, still redacted', async () => {
    let output = '';
    const received = new Promise<void>((resolve) => {
      const destination = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          output += chunk.toString();
          callback();
          resolve();
        },
      });
      createLogger({ level: 'info', format: 'pretty', redactContent: true, destination }).info(
        { apiKey: API_KEY, content: 'private words' },
        'hello pretty',
      );
    });
    await received;
    expect(output).toContain('INFO');
    expect(output).toContain('hello pretty');
    expect(output).toContain('[redacted]');
    expect(output).not.toContain(API_KEY);
    expect(output).not.toContain('private words');
    expect(output).not.toContain('\u001b[');
    expect(() => JSON.parse(output) as unknown).toThrow();
  });
});

describe('loggerFromConfig', () => {
  it('follows LOG_LEVEL and redacts contents unless LOG_CONTENT is true', () => {
    const quiet = memoryDestination();
    loggerFromConfig(loadConfig({ LOG_LEVEL: 'warn' }), quiet).info({ content: 'x' }, 'dropped');
    loggerFromConfig(loadConfig({ LOG_LEVEL: 'warn' }), quiet).warn({ content: 'x' }, 'kept');
    expect(quiet.lines).toEqual([expect.objectContaining({ msg: 'kept', content: '[redacted]' })]);

    const open = memoryDestination();
    loggerFromConfig(loadConfig({ LOG_CONTENT: 'true' }), open).info({ content: 'visible' });
    expect(open.lines[0]).toMatchObject({ content: 'visible' });
  });
});
