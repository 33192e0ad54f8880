import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DATABASE_POOLERS as CONFIG_POOLERS } from '../../../src/config/resolved-config.js';
import { createPgPool, DATABASE_POOLERS as POOL_POOLERS, parseTimestamptz } from '../../../src/store/postgres/pool.js';

/** pg's own `timestamptz` parser, which the pool's fast one must agree with on every input. */
const pgParse = pg.types.getTypeParser(1184, 'text') as (value: string) => unknown;

const same = (value: string) => {
  const ours = parseTimestamptz(value);
  const theirs = pgParse(value);
  if (theirs instanceof Date) {
    expect(ours).toBeInstanceOf(Date);
    expect((ours as Date).getTime()).toBe(theirs.getTime());
  } else {
    expect(ours).toEqual(theirs);
  }
};

const pad = (value: number, width: number) => String(value).padStart(width, '0');

describe('parseTimestamptz (the store pool\'s parser)', () => {
  it('reads what Postgres writes (DateStyle ISO) exactly as pg does: any date, fraction and whole-hour zone', () => {
    const text = fc
      .record({
        year: fc.integer({ min: 1000, max: 9999 }),
        month: fc.integer({ min: 1, max: 12 }),
        day: fc.integer({ min: 1, max: 28 }),
        hour: fc.integer({ min: 0, max: 23 }),
        minute: fc.integer({ min: 0, max: 59 }),
        second: fc.integer({ min: 0, max: 59 }),
        fraction: fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
        zone: fc.integer({ min: -12, max: 14 }),
      })
      .map(({ year, month, day, hour, minute, second, fraction, zone }) => {
        const clock = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)} ${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}`;
        return `${clock}${fraction === undefined ? '' : `.${fraction}`}${zone < 0 ? '-' : '+'}${pad(Math.abs(zone), 2)}`;
      });
    fc.assert(fc.property(text, (value) => same(value)), { numRuns: 3_000 });
  });

  it('hands every other shape to pg\'s parser, with the same result', () => {
    for (const value of [
      '2026-11-24 03:14:09.123456+00',
      '2026-11-24 03:14:09+05:30',
      '2026-11-24 03:14:09.5-03:30',
      '0099-01-01 00:00:00+00',
      '0001-01-01 00:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      'infinity',
      '-infinity',
      '2026-11-24 03:14:09.+00',
      '2026-11-24 03:14:09.1234567+00',
      '2026-11-24T03:14:09+00',
      'not a date',
    ]) {
      same(value);
    }
  });

  it('reads known instants: UTC with a fraction, and a zone west of UTC', () => {
    expect((parseTimestamptz('2026-11-24 03:14:09.123+00') as Date).toISOString()).toBe('2026-11-24T03:14:09.123Z');
    expect((parseTimestamptz('2026-11-24 03:14:09-02') as Date).toISOString()).toBe('2026-11-24T05:14:09.000Z');
  });
});

describe('createPgPool connection settings', () => {
  const url = 'postgres://u@127.0.0.1:5432/db';
  const settings = (pool: pg.Pool) => {
    const { keepAlive, statement_timeout, query_timeout } = (pool as unknown as { options: pg.PoolConfig }).options;
    return { keepAlive, statement_timeout, query_timeout };
  };

  it('keeps connections alive and bounds every statement: 30 s on the server, a second more on the client', () => {
    expect(settings(createPgPool(url))).toEqual({ keepAlive: true, statement_timeout: 30_000, query_timeout: 31_000 });
    expect(settings(createPgPool(url, { statementTimeoutMs: 250 }))).toEqual({ keepAlive: true, statement_timeout: 250, query_timeout: 1_250 });
    expect(settings(createPgPool(url, { statementTimeoutMs: 0 }))).toEqual({ keepAlive: true, statement_timeout: 0, query_timeout: 0 });
  });

  it('behind a pooler sends no statement_timeout startup parameter (the client timer stays), and in transaction mode makes clients that send statements unnamed', async () => {
    const session = createPgPool(url, { pooler: 'session' });
    const transaction = createPgPool(url, { pooler: 'transaction' });
    expect(settings(session)).toEqual({ keepAlive: true, statement_timeout: undefined, query_timeout: 31_000 });
    expect(settings(transaction)).toEqual({ keepAlive: true, statement_timeout: undefined, query_timeout: 31_000 });
    const clientClass = (pool: pg.Pool) => (pool as unknown as { Client: typeof pg.Client }).Client;
    expect(clientClass(session)).toBe(pg.Client);
    expect(clientClass(transaction)).not.toBe(pg.Client);
    // A client never connected queues its queries: what pg made of each config is there, unsent.
    const client = new (clientClass(transaction))({ connectionString: url });
    const config = { name: 'loopfleet_probe', text: 'SELECT $1::int', values: [1], rowMode: 'array' as const };
    client.query(config).catch(() => {});
    client.query('SELECT 1').catch(() => {});
    const queued = (client as unknown as { queryQueue: { name?: string; text: string; values?: unknown[]; _rowMode?: string }[] }).queryQueue;
    expect(queued.map((query) => [query.name, query.text, query.values, query._rowMode])).toEqual([
      [undefined, 'SELECT $1::int', [1], 'array'],
      [undefined, 'SELECT 1', undefined, undefined],
    ]);
    // The caller's config is left as it was.
    expect(config.name).toBe('loopfleet_probe');
    await Promise.all([session.end(), transaction.end()]);
  });

  it('knows the same poolers as DATABASE_POOLER', () => {
    expect(POOL_POOLERS).toEqual(CONFIG_POOLERS);
  });

  it.each(['pgbouncer', '', 'Transaction'])('refuses pooler %j with config.invalid', (pooler) => {
    expect(() => createPgPool(url, { pooler: pooler as never })).toThrowError(expect.objectContaining({ code: 'config.invalid' }));
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 31])('refuses statementTimeoutMs %s with config.invalid', (statementTimeoutMs) => {
    expect(() => createPgPool(url, { statementTimeoutMs })).toThrowError(expect.objectContaining({ code: 'config.invalid' }));
  });
});
