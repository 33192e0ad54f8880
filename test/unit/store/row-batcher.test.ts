import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { runBatchStatement, RowBatcher, type BatchedRow } from '../../../src/store/batching/row-batcher.js';
import { turn, until } from '../../support/event-loop-turns.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface QueryCall {
  name: string;
  text: string;
  /** values[0] exactly as sent. */
  raw: string;
  /** The session ids of the records in values[0], in order. */
  sessions: string[];
  result: Deferred<{ rows: unknown[] }>;
  /** Resolves the query with one row per given session (`{ sessionId, ...extra }`). */
  answer: (sessions: readonly string[], extra?: Record<string, unknown>) => void;
}

/**
 * A pool whose every query is recorded and stays pending until the test answers it. Queries run on
 * checked-out clients; `released` records how each went back (an error: discarded).
 */
function fakePool(): { pool: pg.Pool; calls: QueryCall[]; released: (Error | undefined)[] } {
  const calls: QueryCall[] = [];
  const released: (Error | undefined)[] = [];
  const query = (config: { name: string; text: string; values: unknown[] }) => {
    const raw = config.values[0] as string;
    const records = JSON.parse(raw) as { session_id: string }[];
    const result = deferred<{ rows: unknown[] }>();
    calls.push({
      name: config.name,
      text: config.text,
      raw,
      sessions: records.map((record) => record.session_id),
      result,
      answer: (sessions, extra = {}) => result.resolve({ rows: sessions.map((sessionId) => ({ sessionId, ...extra })) }),
    });
    return result.promise;
  };
  const pool = {
    connect: () =>
      Promise.resolve({
        query,
        on: () => {},
        removeListener: () => {},
        release: (error?: Error) => void released.push(error),
      }),
  };
  return { pool: pool as unknown as pg.Pool, calls, released };
}

function step(sessionId: string, name = 'loopfleet_commit_step_m'): BatchedRow {
  return { statement: { name, text: 'SELECT 1' }, sessionId, record: JSON.stringify({ session_id: sessionId }) };
}

type Outcome = { state: 'pending' } | { state: 'resolved'; value: unknown } | { state: 'rejected'; error: unknown };

/** Observes a promise synchronously (and handles its rejection at once, so none goes unhandled). */
function track(promise: Promise<unknown>): { readonly outcome: Outcome; done: Promise<void> } {
  const tracked = {
    outcome: { state: 'pending' } as Outcome,
    done: promise.then(
      (value) => {
        tracked.outcome = { state: 'resolved', value };
      },
      (error: unknown) => {
        tracked.outcome = { state: 'rejected', error };
      },
    ),
  };
  return tracked;
}


/** Lets every pending flush and settlement run (for asserting that nothing more happens). */
async function quiesce(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await turn();
}

/** A server's error response to a statement (severity ERROR): the statement rolled back, the connection is idle. */
const serverError = (message: string) => Object.assign(new pg.DatabaseError(message, 100, 'error'), { severity: 'ERROR' });

describe('RowBatcher', () => {
  it('sends the steps of several sessions submitted in one turn as one statement and gives each its own row', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool);
    const a = track(batcher.submit(step('s-a')));
    const b = track(batcher.submit(step('s-b')));
    // Still the same turn of the event loop, though after awaits (as a session's commit would come).
    await Promise.resolve();
    await Promise.resolve();
    const c = track(batcher.submit(step('s-c')));
    expect(calls).toHaveLength(0); // nothing goes out before the end of the turn

    await until(() => calls.length === 1, 'the batch is sent');
    await quiesce();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe('loopfleet_commit_step_m');
    expect(calls[0]!.sessions).toEqual(['s-a', 's-b', 's-c']);

    // Rows come back in another order, one for a session not in the batch, one without a string id; s-b has none.
    const rowC = { sessionId: 's-c', seq: 3 };
    const rowA = { sessionId: 's-a', seq: 1 };
    calls[0]!.result.resolve({ rows: [rowC, { sessionId: 's-x', seq: 9 }, { sessionId: 7 }, rowA] });
    await Promise.all([a.done, b.done, c.done]);
    expect(a.outcome).toEqual({ state: 'resolved', value: { sessionId: 's-a', seq: 1 } });
    expect(c.outcome).toEqual({ state: 'resolved', value: { sessionId: 's-c', seq: 3 } });
    expect(b.outcome).toEqual({ state: 'resolved', value: undefined });
    expect((a.outcome as { value: unknown }).value).toBe(rowA);
    expect((c.outcome as { value: unknown }).value).toBe(rowC);
  });

  it('splits the waiting steps into statements of at most maxSize', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxSize: 4, maxInFlight: 8 });
    const sessions = Array.from({ length: 10 }, (_, i) => `s${i}`);
    const steps = sessions.map((session) => track(batcher.submit(step(session))));

    await until(() => calls.length === 3, 'three statements are sent');
    await quiesce();
    expect(calls.map((call) => call.sessions)).toEqual([
      ['s0', 's1', 's2', 's3'],
      ['s4', 's5', 's6', 's7'],
      ['s8', 's9'],
    ]);
    for (const call of calls) call.answer(call.sessions, { ok: true });
    await Promise.all(steps.map((tracked) => tracked.done));
    expect(steps.map((tracked) => tracked.outcome)).toEqual(sessions.map((sessionId) => ({ state: 'resolved', value: { sessionId, ok: true } })));
    await quiesce();
    expect(calls).toHaveLength(3);
  });

  it('with maxInFlight 1, holds steps submitted while a statement runs and sends them together after it', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxInFlight: 1 });
    const first = track(batcher.submit(step('s1')));
    await until(() => calls.length === 1, 'the first statement is sent');

    const second = track(batcher.submit(step('s2')));
    await turn();
    const third = track(batcher.submit(step('s3')));
    await quiesce();
    expect(calls).toHaveLength(1); // still one in flight: s2 and s3 wait
    expect(second.outcome.state).toBe('pending');
    expect(third.outcome.state).toBe('pending');

    calls[0]!.answer(['s1']);
    await until(() => calls.length === 2, 'the waiting steps are sent');
    await quiesce();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.sessions).toEqual(['s2', 's3']);
    expect(first.outcome).toEqual({ state: 'resolved', value: { sessionId: 's1' } });

    calls[1]!.answer(['s2', 's3']);
    await Promise.all([second.done, third.done]);
    expect(second.outcome).toEqual({ state: 'resolved', value: { sessionId: 's2' } });
    expect(third.outcome).toEqual({ state: 'resolved', value: { sessionId: 's3' } });
  });

  it('with overlapMinWaiting, starts a second statement beside a running one only once that many steps wait', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxInFlight: 2, overlapMinWaiting: 3 });
    const first = track(batcher.submit(step('s1')));
    await until(() => calls.length === 1, 'the first statement is sent: nothing was running');

    // Two waiting, fewer than 3: they wait for the running statement instead of overlapping it.
    const waiting = ['s2', 's3'].map((session) => track(batcher.submit(step(session))));
    await quiesce();
    expect(calls).toHaveLength(1);

    // A third makes 3 waiting: a second statement starts beside the first and carries all three.
    const third = track(batcher.submit(step('s4')));
    await until(() => calls.length === 2, 'a second statement overlaps the first');
    expect(calls[1]!.sessions).toEqual(['s2', 's3', 's4']);

    // When the first ends, the second still runs, and one waiting step is fewer than 3: it waits.
    const late = track(batcher.submit(step('s5')));
    calls[0]!.answer(['s1']);
    await first.done;
    await quiesce();
    expect(calls).toHaveLength(2);
    expect(late.outcome.state).toBe('pending');

    // Once nothing runs, a single waiting step goes at once.
    calls[1]!.answer(['s2', 's3', 's4']);
    await until(() => calls.length === 3, 'the late step is sent when nothing else runs');
    expect(calls[2]!.sessions).toEqual(['s5']);
    calls[2]!.answer(['s5']);
    await Promise.all([...waiting.map((tracked) => tracked.done), third.done, late.done]);
    expect(late.outcome).toEqual({ state: 'resolved', value: { sessionId: 's5' } });
    expect(waiting.map((tracked) => tracked.outcome)).toEqual([
      { state: 'resolved', value: { sessionId: 's2' } },
      { state: 'resolved', value: { sessionId: 's3' } },
    ]);
  });

  it('never puts two steps of one session in one statement: the second goes in a later one', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxInFlight: 1 });
    const firstOfS1 = track(batcher.submit(step('s1')));
    const s2 = track(batcher.submit(step('s2')));
    const secondOfS1 = track(batcher.submit(step('s1')));

    await until(() => calls.length === 1, 'the first statement is sent');
    await quiesce();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.sessions).toEqual(['s1', 's2']);

    calls[0]!.answer(['s1', 's2'], { statement: 1 });
    await until(() => calls.length === 2, 'the second step of s1 is sent');
    expect(calls[1]!.sessions).toEqual(['s1']);
    calls[1]!.answer(['s1'], { statement: 2 });

    await Promise.all([firstOfS1.done, s2.done, secondOfS1.done]);
    expect(firstOfS1.outcome).toEqual({ state: 'resolved', value: { sessionId: 's1', statement: 1 } });
    expect(s2.outcome).toEqual({ state: 'resolved', value: { sessionId: 's2', statement: 1 } });
    expect(secondOfS1.outcome).toEqual({ state: 'resolved', value: { sessionId: 's1', statement: 2 } });
    await quiesce();
    expect(calls).toHaveLength(2);
  });

  it('never mixes variants in one statement', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxInFlight: 4 });
    const a1 = track(batcher.submit(step('s1', 'variant_a')));
    const b2 = track(batcher.submit(step('s2', 'variant_b')));
    const a3 = track(batcher.submit(step('s3', 'variant_a')));

    await until(() => calls.length === 2, 'one statement per variant is sent');
    await quiesce();
    expect(calls.map((call) => [call.name, call.sessions])).toEqual([
      ['variant_a', ['s1', 's3']],
      ['variant_b', ['s2']],
    ]);
    for (const call of calls) call.answer(call.sessions, { name: call.name });
    await Promise.all([a1.done, b2.done, a3.done]);
    expect([a1.outcome, b2.outcome, a3.outcome]).toEqual([
      { state: 'resolved', value: { sessionId: 's1', name: 'variant_a' } },
      { state: 'resolved', value: { sessionId: 's2', name: 'variant_b' } },
      { state: 'resolved', value: { sessionId: 's3', name: 'variant_a' } },
    ]);
  });

  it('with one free slot, sends the variant whose oldest waiting step waited longest', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxInFlight: 1 });
    // a/s1 goes first; a's second s1 step stays queued under `variant_a` (first in the queue map),
    // yet b/s2 was submitted before it, so b must go next.
    const outcomes = [
      track(batcher.submit(step('s1', 'variant_a'))),
      track(batcher.submit(step('s2', 'variant_b'))),
      track(batcher.submit(step('s1', 'variant_a'))),
    ];

    await until(() => calls.length === 1, 'the first statement is sent');
    expect([calls[0]!.name, calls[0]!.sessions]).toEqual(['variant_a', ['s1']]);
    calls[0]!.answer(['s1']);
    await until(() => calls.length === 2, 'the second statement is sent');
    expect([calls[1]!.name, calls[1]!.sessions]).toEqual(['variant_b', ['s2']]);
    calls[1]!.answer(['s2']);
    await until(() => calls.length === 3, 'the third statement is sent');
    expect([calls[2]!.name, calls[2]!.sessions]).toEqual(['variant_a', ['s1']]);
    calls[2]!.answer(['s1']);

    await Promise.all(outcomes.map((tracked) => tracked.done));
    expect(outcomes.map((tracked) => tracked.outcome.state)).toEqual(['resolved', 'resolved', 'resolved']);
  });

  it('after a server error on a batch, sends each step alone; one failing alone rejects only that step', async () => {
    const { pool, calls } = fakePool();
    // Three statements at once, so the three resends go together (batch-queue.test.ts: the bound).
    const batcher = new RowBatcher(pool, { maxInFlight: 3 });
    const s1 = track(batcher.submit(step('s1')));
    const s2 = track(batcher.submit(step('s2')));
    const s3 = track(batcher.submit(step('s3')));
    await until(() => calls.length === 1, 'the batch is sent');
    expect(calls[0]!.sessions).toEqual(['s1', 's2', 's3']);

    calls[0]!.result.reject(serverError('duplicate key value violates unique constraint'));
    await until(() => calls.length === 4, 'each step is sent again alone');
    await quiesce();
    expect(calls).toHaveLength(4);
    expect(calls.slice(1).map((call) => [call.name, call.sessions])).toEqual([
      ['loopfleet_commit_step_m', ['s1']],
      ['loopfleet_commit_step_m', ['s2']],
      ['loopfleet_commit_step_m', ['s3']],
    ]);
    expect([s1, s2, s3].map((tracked) => tracked.outcome.state)).toEqual(['pending', 'pending', 'pending']);

    const own = serverError('check constraint violated');
    calls[1]!.answer(['s1'], { alone: true });
    calls[2]!.result.reject(own);
    calls[3]!.answer(['s3'], { alone: true });
    await Promise.all([s1.done, s2.done, s3.done]);
    expect(s1.outcome).toEqual({ state: 'resolved', value: { sessionId: 's1', alone: true } });
    expect(s2.outcome).toEqual({ state: 'rejected', error: own });
    expect((s2.outcome as { error: unknown }).error).toBe(own);
    expect(s3.outcome).toEqual({ state: 'resolved', value: { sessionId: 's3', alone: true } });
    await quiesce();
    expect(calls).toHaveLength(4);
  });

  it('on any other failure, rejects every step of the batch with it and sends nothing again', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool, { maxInFlight: 1 });
    const steps = ['s1', 's2', 's3'].map((session) => track(batcher.submit(step(session))));
    await until(() => calls.length === 1, 'the batch is sent');

    const lost = new Error('Connection terminated unexpectedly');
    calls[0]!.result.reject(lost);
    await Promise.all(steps.map((tracked) => tracked.done));
    for (const tracked of steps) {
      expect(tracked.outcome.state).toBe('rejected');
      expect((tracked.outcome as { error: unknown }).error).toBe(lost);
    }
    await quiesce();
    expect(calls).toHaveLength(1);

    // The failed statement freed its slot: the next step goes out.
    const next = track(batcher.submit(step('s4')));
    await until(() => calls.length === 2, 'the next step is sent');
    expect(calls[1]!.sessions).toEqual(['s4']);
    calls[1]!.answer(['s4']);
    await next.done;
    expect(next.outcome).toEqual({ state: 'resolved', value: { sessionId: 's4' } });
  });

  it('rejects a lone step the server fails, without sending it again', async () => {
    const { pool, calls } = fakePool();
    const batcher = new RowBatcher(pool);
    const lone = track(batcher.submit(step('s1')));
    await until(() => calls.length === 1, 'the step is sent');

    const error = serverError('deadlock detected');
    calls[0]!.result.reject(error);
    await lone.done;
    expect(lone.outcome.state).toBe('rejected');
    expect((lone.outcome as { error: unknown }).error).toBe(error);
    await quiesce();
    expect(calls).toHaveLength(1);
  });

  it.each([
    [{ maxSize: 0 }, '0'],
    [{ maxInFlight: -1 }, '-1'],
    [{ maxSize: 1.5 }, '1.5'],
    [{ maxInFlight: Number.NaN }, 'NaN'],
    [{ overlapMinWaiting: 0 }, '0'],
    [{ overlapMinWaiting: 2.5 }, '2.5'],
  ])('refuses options %o with config.invalid', (options, received) => {
    const { pool } = fakePool();
    let thrown: unknown;
    try {
      new RowBatcher(pool, options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigInvalidError);
    expect((thrown as ConfigInvalidError).code).toBe('config.invalid');
    expect((thrown as ConfigInvalidError).details).toEqual({ received });
  });

  it('accepts the defaults and explicit positive integers', () => {
    const { pool } = fakePool();
    expect(() => new RowBatcher(pool)).not.toThrow();
    expect(() => new RowBatcher(pool, { maxSize: 1, maxInFlight: 1 })).not.toThrow();
    expect(() => new RowBatcher(pool, { maxInFlight: 2, overlapMinWaiting: 16 })).not.toThrow();
  });
});

describe('runBatchStatement', () => {
  it('sends the records as one JSON array text in $1 under the statement name and returns rows by session', async () => {
    const { pool, calls } = fakePool();
    const statement = { name: 'loopfleet_commit_step_mp', text: 'WITH fence AS (SELECT 1) SELECT 1' };
    const steps: BatchedRow[] = [
      { statement, sessionId: 's1', record: JSON.stringify({ session_id: 's1' }) },
      { statement, sessionId: 's2', record: JSON.stringify({ session_id: 's2' }) },
    ];
    const running = runBatchStatement(pool, statement, steps);
    await until(() => calls.length === 1, 'the statement is sent');

    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe('loopfleet_commit_step_mp');
    expect(calls[0]!.text).toBe('WITH fence AS (SELECT 1) SELECT 1');
    expect(calls[0]!.raw).toBe('[{"session_id":"s1"},{"session_id":"s2"}]');

    calls[0]!.result.resolve({ rows: [{ sessionId: 's2', seq: 5 }, { other: true }] });
    const rows = await running;
    expect([...rows.entries()]).toEqual([['s2', { sessionId: 's2', seq: 5 }]]);
    expect(rows.get('s1')).toBeUndefined();
  });

  it("keeps the connection after a server's error response, and discards it after any other failure", async () => {
    const { pool, calls, released } = fakePool();
    const statement = { name: 'loopfleet_accept_inputs', text: 'SELECT 1' };
    const row: BatchedRow = { statement, sessionId: 's1', record: JSON.stringify({ session_id: 's1' }) };
    const serverError = Object.assign(new pg.DatabaseError('duplicate key value violates unique constraint', 0, 'error'), { severity: 'ERROR' });
    const failed = runBatchStatement(pool, statement, [row]).catch((error: unknown) => error);
    await until(() => calls.length === 1, 'the first statement is sent');
    calls[0]!.result.reject(serverError);
    expect(await failed).toBe(serverError);
    const lost = new Error('Connection terminated unexpectedly');
    const broken = runBatchStatement(pool, statement, [row]).catch((error: unknown) => error);
    await until(() => calls.length === 2, 'the second statement is sent');
    calls[1]!.result.reject(lost);
    expect(await broken).toBe(lost);
    expect(released).toEqual([undefined, lost]);
  });

  it('discards the connection after a FATAL response: the server is closing it (pg_terminate_backend)', async () => {
    const { pool, calls, released } = fakePool();
    const statement = { name: 'loopfleet_accept_inputs', text: 'SELECT 1' };
    const row: BatchedRow = { statement, sessionId: 's1', record: JSON.stringify({ session_id: 's1' }) };
    const fatal = Object.assign(new pg.DatabaseError('terminating connection due to administrator command', 0, 'error'), { severity: 'FATAL', code: '57P01' });
    const failed = runBatchStatement(pool, statement, [row]).catch((error: unknown) => error);
    await until(() => calls.length === 1, 'the statement is sent');
    calls[0]!.result.reject(fatal);
    expect(await failed).toBe(fatal);
    expect(released).toEqual([fatal]);
  });
});
