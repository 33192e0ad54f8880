import { describe, expect, it } from 'vitest';
import { accept, leased, type ContractContext } from '../../contract-helpers.js';

export function claimScenarios(ctx: ContractContext): void {
  async function finish(id: string, token: number, seq: number): Promise<void> {
    await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq, status: 'done' } });
  }

  describe('claimNextInput', () => {
    it('claims in seq order, marking the input and the session running, and returns null when none is open', async () => {
      const { id, token } = await leased(ctx, 'order');
      for (const text of ['one', 'two', 'three']) await accept(ctx.store, id, { payload: { input: text } });
      const fenced = { sessionId: id, leaseToken: token };

      const first = await ctx.store.claimNextInput(fenced);
      expect(first).toMatchObject({ resumed: false, input: { seq: 1, status: 'running', attempts: 1, payload: { input: 'one' }, finishedAt: null } });
      expect(first?.input.startedAt).toBeInstanceOf(Date);
      expect(await ctx.store.getInput(id, 1)).toEqual(first?.input);
      expect((await ctx.store.getSession(id))?.status).toBe('running');
      expect((await ctx.store.getInput(id, 2))?.status).toBe('pending');

      for (const seq of [1, 2, 3]) {
        if (seq > 1) expect((await ctx.store.claimNextInput(fenced))?.input).toMatchObject({ seq, status: 'running' });
        await finish(id, token, seq);
      }
      expect(await ctx.store.claimNextInput(fenced)).toBeNull();
      expect((await ctx.store.getSession(id))?.status).toBe('idle');
      expect((await ctx.store.listInputs(id)).map((input) => [input.status, input.attempts])).toEqual([
        ['done', 1],
        ['done', 1],
        ['done', 1],
      ]);
    });

    it('returns a running input again, resumed, after a takeover: same input, one more attempt, first start kept', async () => {
      const { id, token } = await leased(ctx, 'resume');
      await accept(ctx.store, id);
      await accept(ctx.store, id);
      const claimed = await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      // The claim is the same until the input ends, even for the same holder.
      const again = await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      expect(again).toMatchObject({ resumed: true, input: { seq: 1, attempts: 2 } });

      expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(true);
      const takeover = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      if (!takeover.acquired) throw new Error('expected the lease');
      const resumed = await ctx.store.claimNextInput({ sessionId: id, leaseToken: takeover.token });
      expect(resumed).toMatchObject({ resumed: true, input: { seq: 1, status: 'running', attempts: 3 } });
      expect(resumed?.input.startedAt).toEqual(claimed?.input.startedAt);
      expect((await ctx.store.getInput(id, 2))?.status).toBe('pending');
    });

    it('returns null on a session with no inputs and leaves it idle', async () => {
      const { id, token } = await leased(ctx, 'empty');
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: token })).toBeNull();
      expect((await ctx.store.getSession(id))?.status).toBe('idle');
    });

    it('skips inputs that ended and claims one accepted after the others finished', async () => {
      const { id, token } = await leased(ctx, 'late');
      await accept(ctx.store, id);
      await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'cancelled' } });
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: token })).toBeNull();
      await accept(ctx.store, id);
      expect((await ctx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input).toMatchObject({ seq: 2, attempts: 1 });
    });
  });
}
