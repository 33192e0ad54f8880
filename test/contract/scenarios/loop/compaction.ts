import { describe, expect, it } from 'vitest';
import type { CompactionWrite } from '../../../../src/core/ports/session-store.js';
import { assistant, expectCode, leased, PENDING, snapshot, toolCall, usageRound, user, type ContractContext } from '../../contract-helpers.js';

function fold(foldSeqs: number[], noteSeq?: number): CompactionWrite {
  const record = { fromSeq: Math.min(...foldSeqs), toSeq: Math.max(...foldSeqs), estimatedTokensBefore: 400, estimatedTokensAfter: 120, model: 'summariser' };
  return { foldSeqs, record: noteSeq === undefined ? record : { ...record, noteSeq } };
}

const NOTE = { inputSeq: null, round: null, kind: 'compact_note' as const, message: { role: 'system' as const, content: 'Summary: q1/a1.' } };

export function compactionScenarios(ctx: ContractContext): void {
  /** A leased session with four active messages, seqs 1–4. */
  async function withHistory(label: string): Promise<{ id: string; token: number }> {
    const session = await leased(ctx, label);
    await ctx.store.commitStep({
      sessionId: session.id,
      leaseToken: session.token,
      messages: [user('q1'), assistant('a1'), user('q2'), assistant('a2')].map((message) => ({ inputSeq: null, round: null, message })),
    });
    return session;
  }

  describe('commitStep: compaction', () => {
    it('flips folded messages to compacted: out of the window, still in the full history', async () => {
      const { id, token } = await withHistory('fold');
      const step = await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: [NOTE], compaction: fold([1, 2]) });
      expect(step.messageSeqs).toEqual([5]);

      const window = await ctx.store.loadWindow(id);
      expect(window.map((m) => m.seq)).toEqual([3, 4, 5]);
      expect(window[2]).toMatchObject({ kind: 'compact_note', state: 'active', message: NOTE.message });
      expect((await ctx.store.loadHistory(id)).map((m) => m.seq)).toEqual([3, 4, 5]);
      const history = await ctx.store.loadHistory(id, { includeCompacted: true });
      expect(history.map((m) => [m.seq, m.state, m.message.content])).toEqual([
        [1, 'compacted', 'q1'],
        [2, 'compacted', 'a1'],
        [3, 'active', 'q2'],
        [4, 'active', 'a2'],
        [5, 'active', 'Summary: q1/a1.'],
      ]);
      expect((await ctx.store.getSession(id))?.nextMessageSeq).toBe(5);
    });

    it('folds with an explicit note seq and no new message', async () => {
      const { id, token } = await withHistory('noteseq');
      expect((await ctx.store.commitStep({ sessionId: id, leaseToken: token, compaction: fold([2, 3], 4) })).messageSeqs).toEqual([]);
      expect((await ctx.store.loadWindow(id)).map((m) => m.seq)).toEqual([1, 4]);
    });

    it.each([
      ['already compacted', [1, 2]],
      ['never written', [4, 9]],
    ])('refuses to fold a message that is %s with state.conflict, rolling the whole step back', async (_label, foldSeqs) => {
      const { id, token } = await withHistory('refold');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, compaction: fold([1], 4) });
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({
          sessionId: id,
          leaseToken: token,
          messages: [NOTE],
          pending: PENDING,
          toolCalls: [toolCall('call_1', 'started')],
          usageRounds: [usageRound(1, 0, 10)],
          compaction: fold(foldSeqs),
        }),
        'state.conflict',
      );
      const after = await snapshot(ctx.store, id);
      expect(after).toEqual(before);
      expect(after.session).toMatchObject({ nextMessageSeq: 4, pending: null });
      expect((await ctx.store.loadWindow(id)).map((m) => m.seq)).toEqual([2, 3, 4]);
    });
  });
}
