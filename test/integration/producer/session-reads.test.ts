import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { InputInvalidError, type LoadHistoryOptions } from '../../../src/index.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { MAX_HISTORY_PAGE } from '../../../src/store/history/history-options.js';
import { uniqueName } from '../../support/test-database.js';
import { openStoreFixture, queriesSent, seedLongHistory, type StoreFixture } from '../store/store-fixture.js';

/**
 * `stats()` and `history()` are bounded reads: the inbox is counted by one aggregate, never listed,
 * and history pages are cut by SQL (`afterSeq`, `limit`), with the unpaged call still returning all.
 * No worker: the sessions are written straight into Postgres.
 */
describe('SessionQueue: stats and history pages', () => {
  let fx: StoreFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    fx = await openStoreFixture('producer_reads');
    queue = new SessionQueue({ databaseUrl: fx.db.url, redisUrl: inject('redisUrl'), queueName: uniqueName('reads') });
    // 2,500 inputs, statuses in turn (500 of each), more than two pages of listInputs.
    await fx.store.createSession({ id: 'stats-big' });
    await fx.pool.query(
      `INSERT INTO session_inputs (session_id, seq, input_id, kind, payload, status)
       SELECT 'stats-big', g, 'in-' || g, 'send', jsonb_build_object('input', repeat('x', 1000)),
              (ARRAY['pending', 'running', 'done', 'failed', 'cancelled'])[g % 5 + 1]
         FROM generate_series(1, 2500) AS g`,
    );
    await fx.pool.query(`UPDATE sessions SET next_seq = 2500 WHERE id = 'stats-big'`);
    // 2,500 messages, the first 500 folded away: active 501–2500.
    await seedLongHistory(fx, 'long', 2500, 500);
    await fx.store.createSession({ id: 'empty' });
  });

  afterAll(async () => {
    await queue?.close();
    await fx?.close();
  });

  it('stats counts an inbox of 2,500 inputs exactly, with one aggregate and no input row read (and one read of its children)', async () => {
    let report: Awaited<ReturnType<SessionQueue['stats']>> | undefined;
    const sent = await queriesSent(async () => {
      report = await queue.stats('stats-big');
    });
    expect(report).toMatchObject({ sessionId: 'stats-big', status: 'idle', inputs: { pending: 500, running: 500, done: 500, failed: 500, cancelled: 500, total: 2500 } });
    // The children listing reads only child rows (none here), never the session's own inputs.
    const inboxReads = sent.filter((statement) => statement.text.includes('session_inputs') && !statement.text.includes('parent_session_id'));
    expect(inboxReads).toHaveLength(1);
    expect(inboxReads[0]!.text).toMatch(/count\(\*\)[\s\S]*GROUP BY status/);
    expect(sent.length).toBeLessThanOrEqual(3);
    expect((await queue.stats('empty')).inputs).toEqual({ pending: 0, running: 0, waiting: 0, done: 0, failed: 0, cancelled: 0, total: 0 });
  });

  it('history without options still returns everything; with afterSeq and limit, the right slice, bounded in the SQL', async () => {
    const seqs = async (options?: LoadHistoryOptions) => (await queue.history('long', options)).map((row) => row.seq);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(await seqs()).toEqual(range(501, 2500));
    expect(await seqs({ includeCompacted: true })).toEqual(range(1, 2500));
    expect(await seqs({ limit: 3 })).toEqual([501, 502, 503]);
    expect(await seqs({ afterSeq: 1000, limit: 5 })).toEqual(range(1001, 1005));
    expect(await seqs({ includeCompacted: true, afterSeq: 10, limit: 3 })).toEqual([11, 12, 13]);
    expect(await seqs({ afterSeq: 2498 })).toEqual([2499, 2500]);
    expect(await seqs({ afterSeq: 2500, limit: 10 })).toEqual([]);
    const [page] = await queue.history('long', { afterSeq: 1999, limit: 1 });
    expect(page).toMatchObject({ seq: 2000, state: 'active', message: { role: 'assistant', content: 'message 2000' } });

    // Paging through: every row once, in order, each read stopped by its LIMIT.
    const read: number[] = [];
    const sent = await queriesSent(async () => {
      let afterSeq = 0;
      for (;;) {
        const rows = await queue.history('long', { includeCompacted: true, afterSeq, limit: 1000 });
        read.push(...rows.map((row) => row.seq));
        if (rows.length < 1000) break;
        afterSeq = rows.at(-1)!.seq;
      }
    });
    expect(read).toEqual(range(1, 2500));
    const historyReads = sent.filter((statement) => statement.text.includes('FROM messages'));
    expect(historyReads.map((statement) => statement.values.slice(1))).toEqual([
      [0, 1000],
      [1000, 1000],
      [2000, 1000],
    ]);
    expect(historyReads.every((statement) => /LIMIT \$3/.test(statement.text))).toBe(true);
  });

  it.each([
    ['a zero limit', { limit: 0 }],
    [`a limit over ${MAX_HISTORY_PAGE}`, { limit: MAX_HISTORY_PAGE + 1 }],
    ['a fractional limit', { limit: 2.5 }],
    ['a negative afterSeq', { afterSeq: -1 }],
    ['an unsafe afterSeq', { afterSeq: Number.MAX_SAFE_INTEGER + 1 }],
    ['a string afterSeq', { afterSeq: '10' }],
    ['a non-boolean includeCompacted', { includeCompacted: 1 }],
  ])('history refuses %s with input.invalid, before any read', async (_label, options) => {
    const sent = await queriesSent(async () => {
      const refused = queue.history('long', options as LoadHistoryOptions);
      await expect(refused).rejects.toBeInstanceOf(InputInvalidError);
      await expect(refused).rejects.toMatchObject({ code: 'input.invalid' });
    });
    expect(sent).toEqual([]);
  });

  it('a page of a session that does not exist is session.not_found; an empty page of one that does is empty', async () => {
    await expect(queue.history('nobody', { afterSeq: 5, limit: 10 })).rejects.toMatchObject({ code: 'session.not_found' });
    expect(await queue.history('empty', { limit: 10 })).toEqual([]);
  });
});
