import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistant, countRows, leasedSession, openStoreFixture, sessionCounters, sessionId, user, type StoreFixture } from './store-fixture.js';

describe('commitStep: compaction', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('compaction');
  });

  afterAll(async () => {
    await fx.close();
  });

  async function sessionWithHistory(label: string): Promise<{ id: string; token: number }> {
    const id = sessionId(label);
    const token = await leasedSession(fx.store, id);
    await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: [user('q1'), assistant('a1'), user('q2'), assistant('a2')].map((message) => ({ inputSeq: null, round: null, message })),
    });
    return { id, token };
  }

  it('folds messages out of the window, appends the note and records the fold', async () => {
    const { id, token } = await sessionWithHistory('fold');
    const step = await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: [{ inputSeq: null, round: null, kind: 'compact_note', message: { role: 'system', content: 'Summary: q1/a1.' } }],
      compaction: {
        foldSeqs: [1, 2],
        record: { fromSeq: 1, toSeq: 2, estimatedTokensBefore: 400, estimatedTokensAfter: 120, model: 'summariser' },
      },
    });
    expect(step.messageSeqs).toEqual([5]);

    const window = await fx.store.loadWindow(id);
    expect(window.map((m) => m.seq)).toEqual([3, 4, 5]);
    expect(window[2]).toMatchObject({ kind: 'compact_note', state: 'active' });
    const history = await fx.store.loadHistory(id, { includeCompacted: true });
    expect(history.map((m) => [m.seq, m.state])).toEqual([
      [1, 'compacted'],
      [2, 'compacted'],
      [3, 'active'],
      [4, 'active'],
      [5, 'active'],
    ]);
    expect((await fx.store.loadHistory(id)).map((m) => m.seq)).toEqual([3, 4, 5]);

    const record = await fx.pool.query(
      `SELECT note_seq::int AS "noteSeq", from_seq::int AS "fromSeq", to_seq::int AS "toSeq",
              folded_messages AS "folded", estimated_tokens_before AS "before", estimated_tokens_after AS "after", model
         FROM compactions WHERE session_id = $1`,
      [id],
    );
    expect(record.rows).toEqual([{ noteSeq: 5, fromSeq: 1, toSeq: 2, folded: 2, before: 400, after: 120, model: 'summariser' }]);
  });

  it('refuses to fold a message that is not active, rolling the whole step back', async () => {
    const { id, token } = await sessionWithHistory('refold');
    await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      compaction: { foldSeqs: [1], record: { noteSeq: 4, fromSeq: 1, toSeq: 1, estimatedTokensBefore: 10, estimatedTokensAfter: 5, model: null } },
    });
    await expect(
      fx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: null, round: null, kind: 'compact_note', message: { role: 'system', content: 'again' } }],
        compaction: { foldSeqs: [1, 2], record: { fromSeq: 1, toSeq: 2, estimatedTokensBefore: 10, estimatedTokensAfter: 5, model: null } },
      }),
    ).rejects.toMatchObject({ code: 'state.conflict' });
    expect(await countRows(fx.pool, 'messages', id)).toBe(4);
    expect(await countRows(fx.pool, 'compactions', id)).toBe(1);
    expect((await sessionCounters(fx.pool, id))?.nextMessageSeq).toBe(4);
    expect((await fx.store.loadWindow(id)).map((m) => m.seq)).toEqual([2, 3, 4]);
  });

  it('needs a note: an explicit noteSeq or a compact_note message in the step', async () => {
    const { id, token } = await sessionWithHistory('nonote');
    await expect(
      fx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        compaction: { foldSeqs: [1], record: { fromSeq: 1, toSeq: 1, estimatedTokensBefore: 10, estimatedTokensAfter: 5, model: null } },
      }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    expect((await fx.store.loadWindow(id)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
  });
});
