import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { ReadBatcher, runReads, type ReadKind, type ReadRows } from '../../../src/store/batching/read-batcher.js';

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

/** A result of rows `[sessionId, name]`. */
function result(...rows: [string, string][]): pg.QueryResult {
  return { rows: rows.map(([sessionId, name]) => ({ sessionId, name })), rowCount: rows.length, command: 'SELECT', oid: 0, fields: [] } as unknown as pg.QueryResult;
}

interface Read {
  sessionId: string;
}

const ids = (reads: readonly Read[]) => reads.map((read) => read.sessionId).join(',');
/** Two statements per round trip, for all its sessions. */
const pair: ReadKind<Read> = { key: 'pair', statements: 2, sql: (reads) => `A ${ids(reads)}; B ${ids(reads)}` };
const single: ReadKind<Read> = { key: 'single', statements: 1, sql: (reads) => `C ${ids(reads)}` };

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 200; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}

/** Each statement's rows of a read, by name. */
const names = (rows: ReadRows) => rows.map((statement) => statement.map((row) => (row as { name: string }).name));

describe('ReadBatcher', () => {
  it('sends the reads of one turn as one query, each kind once for all its sessions, and hands each read its own rows', async () => {
    const { pool, sent } = fakePool();
    const batcher = new ReadBatcher(pool);
    const a = batcher.submit(pair, { sessionId: 'a' });
    const b = batcher.submit(pair, { sessionId: 'b' });
    const c = batcher.submit(single, { sessionId: 'a' });
    await until(() => sent.length === 1, 'the query is sent');
    expect(sent[0]!.text).toBe('A a,b; B a,b;\nC a');
    sent[0]!.answer([result(['a', 'a1'], ['b', 'b1'], ['a', 'a2']), result(['b', 'b3']), result(['a', 'c1'])]);
    expect(names(await a)).toEqual([['a1', 'a2'], []]);
    expect(names(await b)).toEqual([['b1'], ['b3']]);
    expect(names(await c)).toEqual([['c1']]);
  });

  it('takes one read per session and kind into a round trip; a second waits for the next', async () => {
    const { pool, sent } = fakePool();
    const batcher = new ReadBatcher(pool);
    const first = batcher.submit(single, { sessionId: 'a' });
    const second = batcher.submit(single, { sessionId: 'a' });
    const other = batcher.submit(single, { sessionId: 'b' });
    await until(() => sent.length === 2, 'both queries are sent');
    expect(sent.map((entry) => entry.text)).toEqual(['C a,b', 'C a']);
    sent[0]!.answer(result(['a', 'first'], ['b', 'other']));
    sent[1]!.answer(result(['a', 'second']));
    expect((await Promise.all([first, second, other])).map(names)).toEqual([[['first']], [['second']], [['other']]]);
  });

  it('holds reads made while the only slot is busy and sends them together after it', async () => {
    const { pool, sent } = fakePool();
    const batcher = new ReadBatcher(pool, { maxInFlight: 1 });
    const first = batcher.submit(single, { sessionId: 'a' });
    await until(() => sent.length === 1, 'the first query is sent');
    const second = batcher.submit(single, { sessionId: 'b' });
    const third = batcher.submit(single, { sessionId: 'c' });
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    // A single statement's result comes back bare, not in an array.
    sent[0]!.answer(result(['a', 'one']));
    expect(names(await first)).toEqual([['one']]);
    await until(() => sent.length === 2, 'the held reads are sent');
    expect(sent[1]!.text).toBe('C b,c');
    sent[1]!.answer(result(['c', 'three'], ['b', 'two']));
    expect(names(await second)).toEqual([['two']]);
    expect(names(await third)).toEqual([['three']]);
  });

  it('after a server error, sends each read alone; only the failing one rejects', async () => {
    const { pool, sent, released } = fakePool();
    // Three round trips at once, so the three resends go together (batch-queue.test.ts: the bound).
    const batcher = new ReadBatcher(pool, { maxInFlight: 3 });
    const reads = ['a', 'bad', 'c'].map((sessionId) => batcher.submit(single, { sessionId }).catch((error: unknown) => error));
    await until(() => sent.length === 1, 'the batch is sent');
    const serverError = new pg.DatabaseError('invalid input syntax', 0, 'error');
    serverError.severity = 'ERROR';
    sent[0]!.fail(serverError);
    await until(() => sent.length === 4, 'each read is sent alone');
    expect(sent.slice(1).map((entry) => entry.text)).toEqual(['C a', 'C bad', 'C c']);
    sent[1]!.answer(result(['a', 'one']));
    sent[2]!.fail(serverError);
    sent[3]!.answer(result(['c', 'three']));
    const [one, bad, three] = await Promise.all(reads);
    expect(names(one as ReadRows)).toEqual([['one']]);
    expect(bad).toBe(serverError);
    expect(names(three as ReadRows)).toEqual([['three']]);
    // Error responses leave the connection usable: none was discarded.
    expect(released.every((error) => error === undefined)).toBe(true);
  });

  it('rejects every read of the query on any other failure, sending nothing again', async () => {
    const { pool, sent, released } = fakePool();
    const batcher = new ReadBatcher(pool);
    const reads = ['a', 'b'].map((sessionId) => batcher.submit(single, { sessionId }).catch((error: unknown) => error));
    await until(() => sent.length === 1, 'the batch is sent');
    const lost = new Error('Connection terminated unexpectedly');
    sent[0]!.fail(lost);
    expect(await Promise.all(reads)).toEqual([lost, lost]);
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    expect(released).toEqual([lost]);
  });

  it('refuses, as state.corrupt, a result count that does not match the statements sent, and a row that names no session', async () => {
    const { pool, sent } = fakePool();
    const short = runReads(pool, [{ kind: pair, params: { sessionId: 'a' } }]).catch((error: unknown) => error);
    await until(() => sent.length === 1, 'the query is sent');
    sent[0]!.answer([result(['a', 'only one'])]);
    expect(await short).toMatchObject({ code: 'state.corrupt', message: expect.stringContaining('expected 2 results, got 1') });
    const anonymous = runReads(pool, [{ kind: single, params: { sessionId: 'a' } }]).catch((error: unknown) => error);
    await until(() => sent.length === 2, 'the second query is sent');
    sent[1]!.answer({ rows: [{ name: 'whose?' }], rowCount: 1, command: 'SELECT', oid: 0, fields: [] });
    expect(await anonymous).toMatchObject({ code: 'state.corrupt', message: expect.stringContaining('without its sessionId') });
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
    const reads = ['a', 'b', 'c'].map((sessionId) => batcher.submit(single, { sessionId }));
    await until(() => sent.length === 3, 'every read is sent without waiting for another');
    expect(sent.map((entry) => entry.text)).toEqual(['C a', 'C b', 'C c']);
    sent.forEach((entry, index) => entry.answer(result([['a', 'b', 'c'][index]!, `r${index}`])));
    expect((await Promise.all(reads)).map(names)).toEqual([[['r0']], [['r1']], [['r2']]]);
  });
});
