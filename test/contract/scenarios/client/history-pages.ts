import { describe, expect, it } from 'vitest';
import type { LoadHistoryOptions } from '../../../../src/core/ports/session-store.js';
import { MAX_HISTORY_PAGE } from '../../../../src/store/history/history-options.js';
import { assistant, expectCode, leased, user, type ContractContext } from '../../contract-helpers.js';

export function historyPageScenarios(ctx: ContractContext): void {
  describe('loadHistory: pages', () => {
    /** Messages 1–6, then 1 and 2 folded into the note 7: active 3–7, all 1–7. */
    async function folded(label: string): Promise<string> {
      const { id, token } = await leased(ctx, label);
      const messages = [1, 2, 3, 4, 5, 6].map((n) => ({ inputSeq: null, round: null, message: n % 2 === 1 ? user(`q${n}`) : assistant(`a${n}`) }));
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages });
      await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: null, round: null, kind: 'compact_note', message: { role: 'system', content: 'Summary.' } }],
        compaction: { foldSeqs: [1, 2], record: { fromSeq: 1, toSeq: 2, estimatedTokensBefore: 10, estimatedTokensAfter: 2, model: null } },
      });
      return id;
    }

    it('pages the active messages and the whole history by afterSeq (exclusive) and limit, in seq order', async () => {
      const id = await folded('pages');
      const seqs = async (options?: LoadHistoryOptions) => (await ctx.store.loadHistory(id, options)).map((m) => m.seq);
      expect(await seqs()).toEqual([3, 4, 5, 6, 7]);
      expect(await seqs({ limit: 2 })).toEqual([3, 4]);
      expect(await seqs({ afterSeq: 4, limit: 2 })).toEqual([5, 6]);
      expect(await seqs({ afterSeq: 6, limit: 2 })).toEqual([7]);
      expect(await seqs({ afterSeq: 1 })).toEqual([3, 4, 5, 6, 7]);
      expect(await seqs({ afterSeq: 7 })).toEqual([]);
      expect(await seqs({ includeCompacted: true, limit: 3 })).toEqual([1, 2, 3]);
      expect(await seqs({ includeCompacted: true, afterSeq: 1, limit: 2 })).toEqual([2, 3]);
      expect(await seqs({ includeCompacted: true, afterSeq: 5 })).toEqual([6, 7]);
      expect(await seqs({ includeCompacted: true, limit: MAX_HISTORY_PAGE })).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(await seqs({ afterSeq: 0, limit: 1 })).toEqual([3]);
      // A page is the same rows, whole, as the unpaged read returns.
      const all = await ctx.store.loadHistory(id, { includeCompacted: true });
      expect(await ctx.store.loadHistory(id, { includeCompacted: true, afterSeq: 2, limit: 3 })).toEqual(all.slice(2, 5));
      expect(await ctx.store.loadHistory(ctx.id('nobody'), { afterSeq: 3, limit: 5 })).toEqual([]);
    });

    it.each([
      ['a zero limit', { limit: 0 }],
      [`a limit over ${MAX_HISTORY_PAGE}`, { limit: MAX_HISTORY_PAGE + 1 }],
      ['a fractional limit', { limit: 1.5 }],
      ['a string limit', { limit: '5' }],
      ['a null limit', { limit: null }],
      ['a negative afterSeq', { afterSeq: -1 }],
      ['a fractional afterSeq', { afterSeq: 2.5 }],
      ['an afterSeq past 2^53', { afterSeq: 2 ** 53 }],
      ['a NaN afterSeq', { afterSeq: Number.NaN }],
      ['a string afterSeq', { afterSeq: '3' }],
      ['a non-boolean includeCompacted', { includeCompacted: 'yes' }],
      ['options that are not an object', 'all'],
      ['null options', null],
    ])('refuses %s with input.invalid', async (_label, options) => {
      await expectCode(ctx.store.loadHistory(ctx.id('badhistory'), options as LoadHistoryOptions), 'input.invalid');
    });
  });
}
