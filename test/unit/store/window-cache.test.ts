import { describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../../src/core/messages.js';
import { WindowCache } from '../../../src/store/steps/window-cache.js';

function rows(from: number, to: number, text = 'x'): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (let seq = from; seq <= to; seq += 1) {
    out.push({ seq, inputSeq: 1, round: null, kind: 'message', state: 'active', message: { role: 'user', content: text }, createdAt: new Date(0) });
  }
  return out;
}

const seqs = (window: readonly StoredMessage[]) => window.map((row) => row.seq);

describe('WindowCache', () => {
  it('appends the rows read to the window sent while the epoch is the same, and replaces it otherwise', () => {
    const cache = new WindowCache({ minMessages: 2 });
    expect(cache.lookup('s')).toBeNull();
    expect(seqs(cache.merge('s', null, 7, rows(1, 3)))).toEqual([1, 2, 3]);
    const sent = cache.lookup('s');
    expect(sent).toMatchObject({ windowEpoch: 7, throughSeq: 3 });
    expect(seqs(cache.merge('s', sent, 7, rows(4, 5)))).toEqual([1, 2, 3, 4, 5]);
    expect(cache.lookup('s')).toMatchObject({ windowEpoch: 7, throughSeq: 5 });
    // A new epoch: the read returned the whole window.
    expect(seqs(cache.merge('s', cache.lookup('s'), 9, rows(2, 6)))).toEqual([2, 3, 4, 5, 6]);
    expect(cache.lookup('s')).toMatchObject({ windowEpoch: 9, throughSeq: 6 });
  });

  it('builds on the window the read was sent with, even if the entry changed meanwhile', () => {
    const cache = new WindowCache({ minMessages: 1 });
    cache.merge('s', null, 1, rows(1, 3));
    const sent = cache.lookup('s');
    cache.drop('s');
    expect(seqs(cache.merge('s', sent, 1, rows(4, 4)))).toEqual([1, 2, 3, 4]);
  });

  it('hands out copies and freezes what it keeps', () => {
    const cache = new WindowCache({ minMessages: 1 });
    const first = cache.merge('s', null, 1, rows(1, 2));
    first.push(...rows(9, 9));
    expect(seqs(cache.lookup('s')!.rows)).toEqual([1, 2]);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(Object.isFrozen(first[0]!.message)).toBe(true);
  });

  it('keeps no window shorter than minMessages, and nothing with a budget of 0', () => {
    const short = new WindowCache({ minMessages: 3 });
    expect(seqs(short.merge('s', null, 1, rows(1, 2)))).toEqual([1, 2]);
    expect(short.lookup('s')).toBeNull();
    const off = new WindowCache({ maxBytes: 0, minMessages: 1 });
    off.merge('s', null, 1, rows(1, 5));
    expect(off.size()).toEqual({ sessions: 0, bytes: 0 });
  });

  it('evicts the least recently merged windows past the byte budget, and skips a window larger than it', () => {
    // 331 estimated bytes a row (330 + one character), 310 a window: windows of 3 and 2 rows fill it.
    const budget = 310 * 2 + 331 * 5;
    const cache = new WindowCache({ minMessages: 1, maxBytes: budget });
    cache.merge('a', null, 1, rows(1, 2));
    cache.merge('b', null, 1, rows(1, 2));
    cache.merge('a', cache.lookup('a'), 1, rows(3, 3));
    expect(cache.size()).toEqual({ sessions: 2, bytes: budget });
    cache.merge('c', null, 1, rows(1, 2));
    expect(cache.lookup('b')).toBeNull();
    expect(cache.lookup('a')).not.toBeNull();
    expect(cache.size().bytes).toBeLessThanOrEqual(budget);
    expect(seqs(cache.merge('d', null, 1, rows(1, 6)))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(cache.lookup('d')).toBeNull();
  });
});
