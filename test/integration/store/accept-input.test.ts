import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcceptInputParams } from '../../../src/core/ports/session-store.js';
import { countRows, openStoreFixture, sessionCounters, sessionId, type StoreFixture } from './store-fixture.js';

const MAX_BYTES = 1000;

describe('acceptInput', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    // More connections than concurrent callers, so the races below really contend in Postgres.
    fx = await openStoreFixture('accept', { maxConnections: 25 });
  });

  afterAll(async () => {
    await fx.close();
  });

  function accept(params: Partial<AcceptInputParams> & { sessionId: string }) {
    return fx.store.acceptInput({ kind: 'send', payload: { text: 'hi' }, maxBytes: MAX_BYTES, ...params });
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
    expect(again).toEqual({ sessionId: id, seq: original.seq, inputId: 'job:42', duplicate: true });
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
    // it must never decrease along seq. (Microsecond precision, compared in the database.)
    const inversions = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT accepted_at < lag(accepted_at) OVER (ORDER BY seq) AS inverted
           FROM session_inputs WHERE session_id = $1) t
        WHERE inverted`,
      [id],
    );
    expect(inversions.rows[0]?.n).toBe(0);
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
});
