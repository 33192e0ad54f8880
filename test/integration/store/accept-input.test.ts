import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AcceptedInput, AcceptInputParams } from '../../../src/core/ports/session-store.js';
import { countRows, openStoreFixture, pollUntil, sessionCounters, sessionId, type StoreFixture } from './store-fixture.js';

const MAX_BYTES = 1000;

describe('acceptInput', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    // More connections than concurrent callers, so the races below really contend in Postgres.
    // As many accept statements at once as there are callers, so accepts of one session (which never
    // share a statement) really contend for its row in Postgres, as accepts from many producers do.
    fx = await openStoreFixture('accept', { maxConnections: 25 }, { batch: { maxInFlight: 100 } });
  });

  afterAll(async () => {
    await fx.close();
  });

  function accept(params: Partial<AcceptInputParams> & { sessionId: string }) {
    return fx.store.acceptInput({ kind: 'send', payload: { text: 'hi' }, maxBytes: MAX_BYTES, ...params });
  }

  /** Inputs of a session whose accepted_at is earlier than that of the seq before (microseconds, in the database). */
  async function acceptedAtInversions(id: string): Promise<number> {
    const result = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT accepted_at < lag(accepted_at) OVER (ORDER BY seq) AS inverted
           FROM session_inputs WHERE session_id = $1) t
        WHERE inverted`,
      [id],
    );
    return result.rows[0]?.n ?? -1;
  }

  it('creates the session and numbers inputs from 1', async () => {
    const id = sessionId('order');
    const first = await accept({ sessionId: id, payload: { text: 'one' } });
    const second = await accept({ sessionId: id, payload: { text: 'two' }, mode: 'steer', originJobId: 'job-7' });
    expect(first).toMatchObject({ sessionId: id, seq: 1, duplicate: false });
    expect(second).toMatchObject({ sessionId: id, seq: 2, duplicate: false });
    expect(first.inputId).toMatch(/^[0-9a-f-]{36}$/);

    const stored = await fx.store.getInput(id, 2);
    expect(stored).toMatchObject({
      seq: 2,
      inputId: second.inputId,
      kind: 'send',
      mode: 'steer',
      payload: { text: 'two' },
      status: 'pending',
      attempts: 0,
      result: null,
      originJobId: 'job-7',
      startedAt: null,
    });
    expect((await sessionCounters(fx.pool, id))?.nextSeq).toBe(2);
  });

  it('returns the original seq for a repeated input id, burning no seq', async () => {
    const id = sessionId('idem');
    const original = await accept({ sessionId: id, inputId: 'job:42', payload: { text: 'first' } });
    const again = await accept({ sessionId: id, inputId: 'job:42', payload: { text: 'retry' } });
    expect(again).toEqual({ sessionId: id, seq: original.seq, inputId: 'job:42', duplicate: true, tenant: 'default' });
    expect(await countRows(fx.pool, 'session_inputs', id)).toBe(1);
    expect((await fx.store.getInputById(id, 'job:42'))?.payload).toEqual({ text: 'first' });
    expect((await accept({ sessionId: id })).seq).toBe(2);
  });

  it('refuses an oversized payload with input.too_large and writes nothing, not even the session', async () => {
    const id = sessionId('big');
    // Bytes, not characters: "é" is two bytes in UTF-8.
    const payload = { text: 'é'.repeat(500) };
    await expect(accept({ sessionId: id, payload })).rejects.toMatchObject({ code: 'input.too_large' });
    expect(await countRows(fx.pool, 'sessions', id)).toBe(0);
    expect(await countRows(fx.pool, 'session_inputs', id)).toBe(0);
  });

  it('accepts a payload of exactly maxBytes', async () => {
    const id = sessionId('edge');
    const overhead = JSON.stringify({ text: '' }).length;
    const payload = { text: 'a'.repeat(MAX_BYTES - overhead) };
    expect(Buffer.byteLength(JSON.stringify(payload))).toBe(MAX_BYTES);
    expect((await accept({ sessionId: id, payload })).seq).toBe(1);
  });

  it.each([
    ['an unknown kind', { kind: 'shout' }],
    ['an unknown mode', { mode: 'later' }],
    ['an empty input id', { inputId: '' }],
    ['a 201-character input id', { inputId: 'i'.repeat(201) }],
    ['an input id with a space', { inputId: 'a b' }],
    ['a non-string input id', { inputId: 7 }],
    ['an array payload', { payload: ['x'] }],
    ['a null payload', { payload: null }],
    ['a string payload', { payload: 'text' }],
    ['a payload with a NUL character', { payload: { text: 'a\u0000b' } }],
    ['a payload with an unpaired surrogate', { payload: { text: '\ud83d' } }],
    ['a payload JSON cannot hold', { payload: { n: 10n } }],
  ])('refuses %s with input.invalid and writes nothing', async (_label, overrides) => {
    const id = sessionId('bad');
    await expect(accept({ sessionId: id, ...(overrides as Partial<AcceptInputParams>) })).rejects.toMatchObject({
      code: 'input.invalid',
    });
    expect(await countRows(fx.pool, 'sessions', id)).toBe(0);
  });

  it('accepts input ids with every allowed separator', async () => {
    const id = sessionId('ids');
    const inputId = 'bull:queue/job-1_x.y@z';
    expect((await accept({ sessionId: id, inputId })).inputId).toBe(inputId);
  });

  it('gives 20 concurrent accepts on a new session seqs 1..20, gapless, in commit order (I1–I3)', async () => {
    const id = sessionId('race');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => accept({ sessionId: id, inputId: `in-${i}`, payload: { i } })),
    );
    expect(results.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(results.every((r) => !r.duplicate)).toBe(true);

    const rows = await fx.pool.query<{ seq: number; inputId: string; acceptedAt: Date }>(
      `SELECT seq, input_id AS "inputId", accepted_at AS "acceptedAt" FROM session_inputs
        WHERE session_id = $1 ORDER BY seq`,
      [id],
    );
    expect(rows.rows).toHaveLength(20);
    // Each caller's seq is the row its input id landed in.
    for (const result of results) {
      expect(rows.rows.find((row) => row.seq === result.seq)?.inputId).toBe(result.inputId);
    }
    // accepted_at is taken under the session lock, so it orders the transactions as they committed:
    // it must never decrease along seq.
    expect(await acceptedAtInversions(id)).toBe(0);
    expect((await sessionCounters(fx.pool, id))?.nextSeq).toBe(20);
  });

  it('gives 10 concurrent accepts of the same input id one row and one seq', async () => {
    const id = sessionId('same');
    await accept({ sessionId: id, inputId: 'before' });
    const results = await Promise.all(Array.from({ length: 10 }, () => accept({ sessionId: id, inputId: 'same-id' })));
    expect(new Set(results.map((r) => r.seq))).toEqual(new Set([2]));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(await countRows(fx.pool, 'session_inputs', id)).toBe(2);
    expect((await sessionCounters(fx.pool, id))?.nextSeq).toBe(2);
  });

  describe('in one statement', () => {
    /** Every input row of a session, in seq order. */
    async function storedInputs(id: string): Promise<Array<{ seq: number; inputId: string }>> {
      const rows = await fx.pool.query<{ seq: number; inputId: string }>(
        'SELECT seq, input_id AS "inputId" FROM session_inputs WHERE session_id = $1 ORDER BY seq',
        [id],
      );
      return rows.rows;
    }

    /**
     * Checks the outcome of concurrent accepts: `settled` ids were accepted before (with these seqs), the
     * rest are new. Every id has exactly one row, seqs are 1..N with no gap, each new id was accepted
     * once and every other call was a duplicate reporting the original seq, and the allocator is at N.
     */
    async function expectSerialised(id: string, results: AcceptedInput[], settled: Map<string, number>): Promise<void> {
      const rows = await storedInputs(id);
      const seqOf = new Map(rows.map((row) => [row.inputId, row.seq]));
      const ids = new Set([...settled.keys(), ...results.map((r) => r.inputId)]);
      expect(rows.map((row) => row.seq)).toEqual(Array.from({ length: ids.size }, (_, i) => i + 1));
      expect(new Set(seqOf.keys())).toEqual(ids);
      for (const [inputId, seq] of settled) expect(seqOf.get(inputId)).toBe(seq);
      for (const inputId of ids) {
        const calls = results.filter((r) => r.inputId === inputId);
        expect(calls.every((r) => r.seq === seqOf.get(inputId))).toBe(true);
        expect(calls.filter((r) => !r.duplicate)).toHaveLength(settled.has(inputId) ? 0 : 1);
      }
      expect((await sessionCounters(fx.pool, id))?.nextSeq).toBe(ids.size);
      expect(await acceptedAtInversions(id)).toBe(0);
    }

    it('serialises a storm of concurrent new and repeated input ids on a new session: seqs 1..N, one per id', async () => {
      const id = sessionId('storm');
      // 40 new ids, sent 1 to 3 times each, interleaved so that repeats race each other and the rest.
      const calls = Array.from({ length: 40 }, (_, i) => Array.from({ length: 1 + (i % 3) }, () => `new-${i}`)).flat();
      const order = calls.map((inputId, i) => ({ inputId, key: (i * 37) % calls.length })).sort((a, b) => a.key - b.key);
      const connections = new Set<pg.PoolClient>();
      const onAcquire = (client: pg.PoolClient): void => {
        connections.add(client);
      };
      fx.pool.on('acquire', onAcquire);
      const results = await Promise.all(
        order.map(({ inputId }) => accept({ sessionId: id, inputId, payload: { inputId } })),
      ).finally(() => fx.pool.off('acquire', onAcquire));
      // The calls ran on many connections at once, so they really contended in Postgres.
      expect(connections.size).toBeGreaterThan(5);
      expect(results.filter((r) => r.duplicate)).toHaveLength(calls.length - 40);
      await expectSerialised(id, results, new Map());
    });

    it('serialises concurrent accepts on an existing session, repeats of settled inputs included', async () => {
      const id = sessionId('storm2');
      const settled = new Map<string, number>();
      for (const inputId of ['old-0', 'old-1', 'old-2']) settled.set(inputId, (await accept({ sessionId: id, inputId })).seq);
      const calls = [...settled.keys(), ...settled.keys()];
      for (let i = 0; i < 30; i += 1) calls.splice((i * 7) % calls.length, 0, `new-${i}`, ...(i % 4 === 0 ? [`new-${i}`] : []));
      const results = await Promise.all(calls.map((inputId) => accept({ sessionId: id, inputId })));
      await expectSerialised(id, results, settled);
    });

    it('numbers accepts queued behind a held session lock from the final next_seq once it is released', async () => {
      const id = sessionId('held');
      await accept({ sessionId: id, inputId: 'first' });
      const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [id]);
        const inputIds = ['w-0', 'w-1', 'first', 'w-2', 'w-0', 'w-3'];
        const pending = inputIds.map((inputId) => accept({ sessionId: id, inputId }));
        await pollUntil(async () => ((await waitingOnLocks()) >= inputIds.length ? true : undefined), 5_000, 'the accepts to wait');
        await blocker.query('COMMIT');
        await expectSerialised(id, await Promise.all(pending), new Map([['first', 1]]));
      } finally {
        await blocker.query('ROLLBACK').catch(() => {});
        await blocker.end();
      }
    });

    it('waits for a session another transaction is creating, then numbers from 1', async () => {
      const id = sessionId('creating');
      const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('INSERT INTO sessions (id) VALUES ($1)', [id]);
        const pending = ['a', 'b', 'a', 'c'].map((inputId) => accept({ sessionId: id, inputId }));
        await pollUntil(async () => ((await waitingOnLocks()) >= 4 ? true : undefined), 5_000, 'the accepts to wait');
        await blocker.query('COMMIT');
        await expectSerialised(id, await Promise.all(pending), new Map());
      } finally {
        await blocker.query('ROLLBACK').catch(() => {});
        await blocker.end();
      }
    });

    it('sends one statement for a new input and two for a repeated one, keeping the connection', async () => {
      const id = sessionId('trips');
      await accept({ sessionId: id, inputId: 'warm-up' });
      const query = vi.spyOn(pg.Client.prototype, 'query');
      // A connection released with an error is discarded by the pool (and reopened by a later query).
      let discarded = 0;
      const onRelease = (error: Error | undefined): void => {
        if (error) discarded += 1;
      };
      fx.pool.on('release', onRelease);
      try {
        const statementsOf = async (params: Parameters<typeof accept>[0]): Promise<[AcceptedInput, number]> => {
          query.mockClear();
          const result = await accept(params);
          return [result, query.mock.calls.length];
        };
        expect(await statementsOf({ sessionId: sessionId('trips-new') })).toEqual([expect.objectContaining({ seq: 1 }), 1]);
        expect(await statementsOf({ sessionId: id, inputId: 'once' })).toEqual([expect.objectContaining({ seq: 2, duplicate: false }), 1]);
        expect(await statementsOf({ sessionId: id, inputId: 'once' })).toEqual([expect.objectContaining({ seq: 2, duplicate: true }), 2]);
        // The expected unique violation does not cost the connection (pool.query would discard it).
        expect(discarded).toBe(0);
      } finally {
        fx.pool.off('release', onRelease);
        query.mockRestore();
      }
      expect(pg.Client.prototype.query).not.toHaveProperty('mock');
      expect((await sessionCounters(fx.pool, id))?.nextSeq).toBe(2);
    });

    /** Backends of this test database waiting on a lock. */
    async function waitingOnLocks(): Promise<number> {
      const result = await fx.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return result.rows[0]?.n ?? 0;
    }
  });
});
