import { describe, expect, it } from 'vitest';
import { previousStreamId } from '../../../src/producer/stream-cursor.js';
import { resolveSessionQueueOptions, type SessionQueueOptions } from '../../../src/producer/session-queue-options.js';
import { attemptWithin, settleWithin } from '../../../src/fleet/settle-within.js';

describe('previousStreamId', () => {
  it('is the greatest id below the given one', () => {
    expect(previousStreamId('1700000000000-5')).toBe('1700000000000-4');
    expect(previousStreamId('1700000000000-0')).toBe('1699999999999-18446744073709551615');
    expect(previousStreamId('1700000000000')).toBe('1699999999999-18446744073709551615');
    expect(previousStreamId('0-1')).toBe('0-0');
    expect(previousStreamId('0-0')).toBe('0-0');
  });

  it('rejects what is not a stream id', () => {
    expect(() => previousStreamId('$')).toThrow(expect.objectContaining({ code: 'input.invalid' }));
  });
});

describe('resolveSessionQueueOptions', () => {
  it('fills the defaults', () => {
    expect(resolveSessionQueueOptions({})).toMatchObject({
      databaseUrl: 'postgres://postgres:postgres@127.0.0.1:5432/loopfleet',
      redisUrl: 'redis://127.0.0.1:6379',
      queueName: 'loopfleet',
      maxInputBytes: 1_048_576,
      redisTimeoutMs: 2000,
      recheckMs: 2000,
      poolSize: 10,
      pooler: 'none',
      statementTimeoutMs: 30_000,
      batch: { maxSize: 64, maxInFlight: 2 },
      events: { maxLen: 10_000, idleExpirySeconds: 604_800 },
      pool: null,
      redis: null,
      logger: null,
    });
  });

  it('takes a statement timeout of 0 (none), as DATABASE_STATEMENT_TIMEOUT_MS does, and a Redis URL naming a database number', () => {
    expect(resolveSessionQueueOptions({ statementTimeoutMs: 0, redisUrl: 'redis://cache:6379/2' })).toMatchObject({ statementTimeoutMs: 0, redisUrl: 'redis://cache:6379/2' });
  });

  it.each([
    [{ queueName: 'a:b' }, 'queueName'],
    [{ queueName: '' }, 'queueName'],
    [{ maxInputBytes: 0 }, 'maxInputBytes'],
    [{ maxInputBytes: 1.5 }, 'maxInputBytes'],
    [{ redisTimeoutMs: -1 }, 'redisTimeoutMs'],
    [{ redisTimeoutMs: 2 ** 31 }, 'redisTimeoutMs'],
    [{ recheckMs: 1e12 }, 'recheckMs'],
    [{ recheckMs: Number.NaN }, 'recheckMs'],
    [{ databaseUrl: 'mysql://u:secret@h/db' }, 'databaseUrl'],
    [{ databaseUrl: 'not a url secret' }, 'databaseUrl'],
    [{ redisUrl: 'http://h' }, 'redisUrl'],
    [{ redisUrl: 'redis://h:6379/abc' }, 'redisUrl'],
    [{ poolSize: 0 }, 'poolSize'],
    [{ pooler: 'pgbouncer' }, 'pooler'],
    [{ pooler: true }, 'pooler'],
    [{ statementTimeoutMs: -1 }, 'statementTimeoutMs'],
    [{ statementTimeoutMs: 999 }, 'statementTimeoutMs'],
    [{ statementTimeoutMs: 3_600_001 }, 'statementTimeoutMs'],
    [{ statementTimeoutMs: '30000' }, 'statementTimeoutMs'],
    [{ batch: 'big' }, 'batch'],
    [{ batch: [64] }, 'batch'],
    [{ batch: { maxSize: 1.5 } }, 'batch.maxSize'],
    [{ batch: { maxInFlight: 0 } }, 'batch.maxInFlight'],
    [{ events: null }, 'events'],
    [{ events: { maxLen: -1 } }, 'events.maxLen'],
    [{ events: { idleExpirySeconds: '60' } }, 'events.idleExpirySeconds'],
  ])('rejects %j with config.invalid naming %s, never echoing the value', (options, option) => {
    let thrown: unknown;
    try {
      // Options come from JavaScript callers too: wrong types are validated at run time.
      resolveSessionQueueOptions(options as SessionQueueOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'config.invalid', details: { option } });
    expect((thrown as Error).message).not.toContain('secret');
  });
});

describe('settleWithin / attemptWithin', () => {
  it('reports whether the promise settled in time, whatever its outcome', async () => {
    expect(await settleWithin(Promise.resolve(1), 1000)).toBe(true);
    expect(await settleWithin(Promise.reject(new Error('x')), 1000)).toBe(true);
    expect(await settleWithin(new Promise(() => {}), 10)).toBe(false);
  });

  it('hands back the value, the error, or a timeout', async () => {
    expect(await attemptWithin(Promise.resolve(1), 1000)).toEqual({ ok: true, value: 1 });
    const error = new Error('down');
    expect(await attemptWithin(Promise.reject(error), 1000)).toEqual({ ok: false, timedOut: false, error });
    expect(await attemptWithin(new Promise(() => {}), 10)).toMatchObject({ ok: false, timedOut: true });
  });
});
