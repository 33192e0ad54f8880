import { describe, expect, it } from 'vitest';
import { expectCode, running, snapshot, type ContractContext } from '../../contract-helpers.js';

export function parkScenarios(ctx: ContractContext): void {
  describe('parkInput', () => {
    it('parks the running input: waiting with the calls it waits for, the session waiting_for_children, no result, no stats', async () => {
      const { id, token } = await running(ctx, 'park', 2);
      await ctx.store.parkInput({ sessionId: id, leaseToken: token, inputSeq: 1, awaiting: ['call_a', 'call_b'] });

      const input = await ctx.store.getInput(id, 1);
      expect(input).toMatchObject({ status: 'waiting', awaiting: ['call_a', 'call_b'], attempts: 1, result: null, errorCode: null, finishedAt: null });
      expect(input?.startedAt).toBeInstanceOf(Date);
      expect((await ctx.store.getInput(id, 2))?.status).toBe('pending');
      const session = await ctx.store.getSession(id);
      expect(session).toMatchObject({ status: 'waiting_for_children', lease: { token } });
      expect(session?.stats.inputs).toBe(0);
      expect((await ctx.store.countInputs(id)).waiting).toBe(1);
      expect((await ctx.store.listInputs(id, { status: 'waiting' })).map((row) => row.seq)).toEqual([1]);
    });

    it('refuses a stale token with lease.lost and an input not running with state.conflict, writing nothing', async () => {
      const { id, token } = await running(ctx, 'park-refused', 2);
      const before = await snapshot(ctx.store, id);
      await expectCode(ctx.store.parkInput({ sessionId: id, leaseToken: token + 1000, inputSeq: 1, awaiting: ['call_a'] }), 'lease.lost');
      await expectCode(ctx.store.parkInput({ sessionId: id, leaseToken: token, inputSeq: 2, awaiting: ['call_a'] }), 'state.conflict');
      await expectCode(ctx.store.parkInput({ sessionId: id, leaseToken: token, inputSeq: 9, awaiting: ['call_a'] }), 'state.conflict');
      expect(await snapshot(ctx.store, id)).toEqual(before);

      // Parked once, it is no longer running: a second park is a conflict too.
      await ctx.store.parkInput({ sessionId: id, leaseToken: token, inputSeq: 1, awaiting: ['call_a'] });
      await expectCode(ctx.store.parkInput({ sessionId: id, leaseToken: token, inputSeq: 1, awaiting: ['call_b'] }), 'state.conflict');
      expect((await ctx.store.getInput(id, 1))?.awaiting).toEqual(['call_a']);
    });

    it('refuses awaited ids that are not a list of distinct tool call ids with input.invalid', async () => {
      const { id, token } = await running(ctx, 'park-invalid');
      const before = await snapshot(ctx.store, id);
      for (const awaiting of [undefined, 'call_a', [''], ['call a'], ['call_a', 'call_a'], [7]]) {
        await expectCode(ctx.store.parkInput({ sessionId: id, leaseToken: token, inputSeq: 1, awaiting: awaiting as string[] }), 'input.invalid');
      }
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });
  });
}
