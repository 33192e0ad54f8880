import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../../src/core/messages.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { assistant, leasedSession, openStoreFixture, sessionId, user, type StoreFixture } from './store-fixture.js';

/**
 * The worker-side window cache behind `loadRunState` (docs/store.md, "The window cache"), against real
 * Postgres. A cached window is proved to be reused by editing a stored row out of band without taking
 * a new epoch: the cached read still shows the old text, a full read the new one.
 */
describe('loadRunState: the window cache', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('window-cache', {}, { windowCache: { minMessages: 3 } });
  });

  afterAll(async () => {
    await fx.close();
  });

  async function append(store: PostgresSessionStore, id: string, token: number, texts: string[]): Promise<number[]> {
    const step = await store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: texts.map((text, index) => ({ inputSeq: null, round: null, message: index % 2 === 0 ? user(text) : assistant(text) })),
    });
    return step.messageSeqs;
  }

  async function windowOf(store: PostgresSessionStore, id: string): Promise<StoredMessage[]> {
    return (await store.loadRunState(id, 1)).window;
  }

  async function editOutOfBand(id: string, seq: number, text: string): Promise<void> {
    await fx.pool.query('UPDATE messages SET content = to_jsonb($3::text) WHERE session_id = $1 AND seq = $2', [id, seq, text]);
  }

  const texts = (window: StoredMessage[]) => window.map((row) => [row.seq, row.message.content]);

  it('reads only the rows appended since, and the window is the one a full read gives', async () => {
    const id = sessionId('tail');
    const token = await leasedSession(fx.store, id);
    await append(fx.store, id, token, ['q1', 'a1', 'q2', 'a2']);
    expect(texts(await windowOf(fx.store, id))).toEqual(texts(await fx.store.loadWindow(id)));
    await append(fx.store, id, token, ['q3', 'a3']);
    await editOutOfBand(id, 1, 'edited');

    const cached = await windowOf(fx.store, id);
    expect(texts(cached)).toEqual([[1, 'q1'], [2, 'a1'], [3, 'q2'], [4, 'a2'], [5, 'q3'], [6, 'a3']]);
    // The full read sees the edit; the cached one did not read row 1 again.
    expect((await fx.store.loadWindow(id))[0]?.message.content).toBe('edited');
  });

  it('reads the whole window again once the session takes a new epoch', async () => {
    const id = sessionId('epoch');
    const token = await leasedSession(fx.store, id);
    await append(fx.store, id, token, ['q1', 'a1', 'q2']);
    await windowOf(fx.store, id);
    await editOutOfBand(id, 2, 'edited');
    expect((await windowOf(fx.store, id))[1]?.message.content).toBe('a1');
    await fx.pool.query("UPDATE sessions SET window_epoch = nextval('window_epoch_seq') WHERE id = $1", [id]);
    expect((await windowOf(fx.store, id))[1]?.message.content).toBe('edited');
  });

  it('a fold takes a new epoch: the folded rows leave the cached window and the note joins it', async () => {
    const id = sessionId('fold');
    const token = await leasedSession(fx.store, id);
    await append(fx.store, id, token, ['q1', 'a1', 'q2', 'a2']);
    await windowOf(fx.store, id);
    const epoch = async () => (await fx.pool.query<{ e: number }>('SELECT window_epoch::int AS e FROM sessions WHERE id = $1', [id])).rows[0]?.e;
    const before = await epoch();
    await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: [{ inputSeq: null, round: null, kind: 'compact_note', message: { role: 'system', content: 'Summary: q1/a1.' } }],
      compaction: { foldSeqs: [1, 2], record: { fromSeq: 1, toSeq: 2, estimatedTokensBefore: 40, estimatedTokensAfter: 12, model: null } },
    });
    expect(await epoch()).not.toBe(before);
    const window = await windowOf(fx.store, id);
    expect(window.map((row) => row.seq)).toEqual([3, 4, 5]);
    expect(texts(window)).toEqual(texts(await fx.store.loadWindow(id)));
  });

  it('a session deleted and created again under the same id is read whole', async () => {
    const id = sessionId('again');
    const token = await leasedSession(fx.store, id);
    await append(fx.store, id, token, ['old 1', 'old 2', 'old 3', 'old 4']);
    await windowOf(fx.store, id);
    await fx.store.deleteSession(id);
    const token2 = await leasedSession(fx.store, id);
    await append(fx.store, id, token2, ['new 1', 'new 2', 'new 3', 'new 4', 'new 5']);
    expect(texts(await windowOf(fx.store, id))).toEqual([[1, 'new 1'], [2, 'new 2'], [3, 'new 3'], [4, 'new 4'], [5, 'new 5']]);
  });

  it('an empty window and a missing session read as empty', async () => {
    const id = sessionId('empty');
    await leasedSession(fx.store, id);
    expect(await windowOf(fx.store, id)).toEqual([]);
    expect(await windowOf(fx.store, sessionId('missing'))).toEqual([]);
  });

  it('keeps no window shorter than minMessages', async () => {
    const id = sessionId('short');
    const token = await leasedSession(fx.store, id);
    await append(fx.store, id, token, ['q1', 'a1']);
    await windowOf(fx.store, id);
    await editOutOfBand(id, 1, 'edited');
    expect((await windowOf(fx.store, id))[0]?.message.content).toBe('edited');
  });

  it('drops the least recently used window once the byte budget is passed', async () => {
    // A window of three short rows is ~1,310 estimated bytes: one fits in 2,000, two do not.
    const store = new PostgresSessionStore(fx.pool, { windowCache: { minMessages: 3, maxBytes: 2_000 } });
    const [a, b] = [sessionId('lru-a'), sessionId('lru-b')];
    const tokens = [await leasedSession(store, a), await leasedSession(store, b)];
    await append(store, a, tokens[0]!, ['a1', 'a2', 'a3']);
    await append(store, b, tokens[1]!, ['b1', 'b2', 'b3']);
    await windowOf(store, a);
    await windowOf(store, b);
    await editOutOfBand(a, 1, 'edited');
    await editOutOfBand(b, 1, 'edited');
    expect((await windowOf(store, b))[0]?.message.content).toBe('b1');
    expect((await windowOf(store, a))[0]?.message.content).toBe('edited');
  });

  it('with a budget of 0 keeps nothing', async () => {
    const store = new PostgresSessionStore(fx.pool, { windowCache: { minMessages: 1, maxBytes: 0 } });
    const id = sessionId('off');
    const token = await leasedSession(store, id);
    await append(store, id, token, ['q1', 'a1', 'q2']);
    await windowOf(store, id);
    await editOutOfBand(id, 1, 'edited');
    expect((await windowOf(store, id))[0]?.message.content).toBe('edited');
  });

  it('hands every run its own array of frozen rows', async () => {
    const id = sessionId('frozen');
    const token = await leasedSession(fx.store, id);
    await append(fx.store, id, token, ['q1', 'a1', 'q2']);
    const first = await windowOf(fx.store, id);
    first.pop();
    first.push(first[0]!);
    const second = await windowOf(fx.store, id);
    expect(second.map((row) => row.seq)).toEqual([1, 2, 3]);
    expect(Object.isFrozen(second[0])).toBe(true);
    expect(() => {
      (second[0]!.message as { content: unknown }).content = 'changed';
    }).toThrow(TypeError);
  });

  it('serves cached and uncached sessions read in the same round trip', async () => {
    const ids = [sessionId('mix-a'), sessionId('mix-b'), sessionId('mix-c')];
    const tokens = await Promise.all(ids.map((id) => leasedSession(fx.store, id)));
    await Promise.all(ids.map((id, i) => append(fx.store, id, tokens[i]!, [`${id} 1`, `${id} 2`, `${id} 3`])));
    await Promise.all(ids.slice(0, 2).map((id) => windowOf(fx.store, id)));
    await Promise.all(ids.map((id, i) => append(fx.store, id, tokens[i]!, [`${id} 4`])));
    const windows = await Promise.all(ids.map((id) => windowOf(fx.store, id)));
    for (const [i, id] of ids.entries()) expect(texts(windows[i]!)).toEqual(texts(await fx.store.loadWindow(id)));
  });

  it('matches a full read after every step of a random run of appends and folds', async () => {
    const id = sessionId('random');
    const token = await leasedSession(fx.store, id);
    let state = 0x5eed;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state % n;
    };
    let counter = 0;
    for (let step = 0; step < 40; step += 1) {
      const active = (await fx.store.loadWindow(id)).map((row) => row.seq);
      if (active.length > 4 && random(4) === 0) {
        const folds = active.filter(() => random(3) === 0).slice(0, 5);
        if (folds.length > 0) {
          await fx.store.commitStep({
            sessionId: id,
            leaseToken: token,
            messages: random(2) === 0 ? [{ inputSeq: null, round: null, kind: 'compact_note', message: { role: 'system', content: `note ${step}` } }] : [],
            compaction: { foldSeqs: folds, record: { fromSeq: folds[0]!, toSeq: folds.at(-1)!, estimatedTokensBefore: 1, estimatedTokensAfter: 1, model: null } },
          });
        }
      } else {
        await append(fx.store, id, token, Array.from({ length: 1 + random(4) }, () => `m${(counter += 1)}`));
      }
      const cached = await windowOf(fx.store, id);
      expect(texts(cached), `step ${step}`).toEqual(texts(await fx.store.loadWindow(id)));
      expect(cached.map((row) => row.state)).toEqual(cached.map(() => 'active'));
    }
  });
});
