import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { ReadBatcher, runReads } from '../../../src/store/read-batcher.js';

interface Sent {
  text: string;
  answer: (results: unknown) => void;
  fail: (error: unknown) => void;
}

/** A pool whose queries are recorded and stay pending until the test answers them. */
function fakePool(): { pool: pg.Pool; sent: Sent[]; released: (Error | undefined)[] } {
  const sent: Sent[] = [];
  const released: (Error | undefined)[] = [];
  const client = {
    query: (text: string) =>
      new Promise((resolve, reject) => {
        sent.push({ text, answer: resolve, fail: reject });
      }),
    on: () => {},
    removeListener: () => {},
    release: (error?: Error) => void released.push(error),
  };
  return { pool: { connect: () => Promise.resolve(client) } as unknown as pg.Pool, sent, released };
}

/** A result whose one row names the statement it answers. */
function result(name: string): pg.QueryResult {
  return { rows: [{ name }], rowCount: 1, command: 'SELECT', oid: 0, fields: [] } as unknown as pg.QueryResult;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 200; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}

const names = (results: pg.QueryResult[]) => results.map((entry) => (entry.rows[0] as { name: string }).name);

describe('ReadBatcher', () => {
  it('sends the reads of one turn as one query and hands each its own results, in order', async () => {
    const { pool, sent } = fakePool();
    const batcher = new ReadBatcher(pool);
    const a = batcher.submit({ sql: 'SELECT 1; SELECT 2; SELECT 3', results: 3 });
    const b = batcher.submit({ sql: 'SELECT 4', results: 1 });
    await until(() => sent.length === 1, 'the query is sent');
    expect(sent[0]!.text).toBe('SELECT 1; SELECT 2; SELECT 3;\nSELECT 4');
    sent[0]!.answer(['a1', 'a2', 'a3', 'b1'].map(result));
    expect(names(await a)).toEqual(['a1', 'a2', 'a3']);
    expect(names(await b)).toEqual(['b1']);
  });

  it('holds reads made while the only slot is busy and sends them together after it', async () => {
    const { pool, sent } = fakePool();
    const batcher = new ReadBatcher(pool, { maxInFlight: 1 });
    const first = batcher.submit({ sql: 'SELECT 1', results: 1 });
    await until(() => sent.length === 1, 'the first query is sent');
    const second = batcher.submit({ sql: 'SELECT 2', results: 1 });
    const third = batcher.submit({ sql: 'SELECT 3', results: 1 });
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    // A single statement's result comes back bare, not in an array.
    sent[0]!.answer(result('one'));
    expect(names(await first)).toEqual(['one']);
    await until(() => sent.length === 2, 'the held reads are sent');
    expect(sent[1]!.text).toBe('SELECT 2;\nSELECT 3');
    sent[1]!.answer([result('two'), result('three')]);
    expect(names(await second)).toEqual(['two']);
    expect(names(await third)).toEqual(['three']);
  });

  it('after a server error, sends each read alone; only the failing one rejects', async () => {
    const { pool, sent, released } = fakePool();
    const batcher = new ReadBatcher(pool);
    const reads = ['SELECT 1', 'SELECT bad', 'SELECT 3'].map((sql) => batcher.submit({ sql, results: 1 }).catch((error: unknown) => error));
    await until(() => sent.length === 1, 'the batch is sent');
    const serverError = new pg.DatabaseError('column "bad" does not exist', 0, 'error');
    sent[0]!.fail(serverError);
    await until(() => sent.length === 4, 'each read is sent alone');
    expect(sent.slice(1).map((entry) => entry.text)).toEqual(['SELECT 1', 'SELECT bad', 'SELECT 3']);
    sent[1]!.answer(result('one'));
    sent[2]!.fail(serverError);
    sent[3]!.answer(result('three'));
    const [one, bad, three] = await Promise.all(reads);
    expect(names(one as pg.QueryResult[])).toEqual(['one']);
    expect(bad).toBe(serverError);
    expect(names(three as pg.QueryResult[])).toEqual(['three']);
    // Error responses leave the connection usable: none was discarded.
    expect(released.every((error) => error === undefined)).toBe(true);
  });

  it('rejects every read of the query on any other failure, sending nothing again', async () => {
    const { pool, sent, released } = fakePool();
    const batcher = new ReadBatcher(pool);
    const reads = ['SELECT 1', 'SELECT 2'].map((sql) => batcher.submit({ sql, results: 1 }).catch((error: unknown) => error));
    await until(() => sent.length === 1, 'the batch is sent');
    const lost = new Error('Connection terminated unexpectedly');
    sent[0]!.fail(lost);
    expect(await Promise.all(reads)).toEqual([lost, lost]);
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    expect(released).toEqual([lost]);
  });

  it('refuses a result count that does not match the statements sent', async () => {
    const { pool, sent } = fakePool();
    const reading = runReads(pool, [{ sql: 'SELECT 1; SELECT 2', results: 2 }]).catch((error: unknown) => error);
    await until(() => sent.length === 1, 'the query is sent');
    sent[0]!.answer([result('only one')]);
    expect(String(await reading)).toContain('expected 2 results, got 1');
  });

  it.each([{ maxSize: 0 }, { maxInFlight: -1 }, { maxSize: 2.5 }])('refuses options %o with config.invalid', (options) => {
    const { pool } = fakePool();
    expect(() => new ReadBatcher(pool, options)).toThrow(ConfigInvalidError);
  });
});

describe('batching turned off (maxSize 1)', () => {
  it('sends each read at once, all of them side by side, whatever maxInFlight says', async () => {
    const { pool, sent } = fakePool();
    const batcher = new ReadBatcher(pool, { maxSize: 1, maxInFlight: 1 });
    const reads = ['SELECT 1', 'SELECT 2', 'SELECT 3'].map((sql) => batcher.submit({ sql, results: 1 }));
    await until(() => sent.length === 3, 'every read is sent without waiting for another');
    expect(sent.map((entry) => entry.text)).toEqual(['SELECT 1', 'SELECT 2', 'SELECT 3']);
    sent.forEach((entry, index) => entry.answer(result(`r${index}`)));
    expect((await Promise.all(reads)).map(names)).toEqual([['r0'], ['r1'], ['r2']]);
  });
});
