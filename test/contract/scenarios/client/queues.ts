import { describe, expect, it } from 'vitest';
import { accept, expectCode, snapshot, spawnRequest, type ContractContext } from '../../contract-helpers.js';

/**
 * A session's queue (`LOOPFLEET_QUEUE`): recorded by its create or its first add that names one,
 * never changed, inherited by children. An add naming another queue is refused, writing nothing.
 */
export function queueScenarios(ctx: ContractContext): void {
  describe('queues on one database', () => {
    it('refuses an add on another queue with session.queue_mismatch, writing nothing', async () => {
      const id = ctx.id('queue-mismatch');
      await accept(ctx.store, id, { queue: 'queue-a', inputId: 'first' });
      const before = await snapshot(ctx.store, id);
      await expect(accept(ctx.store, id, { queue: 'queue-b' })).rejects.toMatchObject({
        code: 'session.queue_mismatch',
        details: { sessionId: id, queue: 'queue-b', sessionQueue: 'queue-a' },
      });
      // Not even a repeated input id gets through.
      await expectCode(accept(ctx.store, id, { queue: 'queue-b', inputId: 'first' }), 'session.queue_mismatch');
      expect(await snapshot(ctx.store, id)).toEqual(before);
      // Its own queue, and an add naming none, go on.
      expect((await accept(ctx.store, id, { queue: 'queue-a' })).seq).toBe(2);
      expect((await accept(ctx.store, id)).seq).toBe(3);
    });

    it('records the queue of the first add on a session created without one', async () => {
      const [created, timerMade] = [ctx.id('queue-created'), ctx.id('queue-later')];
      await ctx.store.createSession({ id: created });
      await accept(ctx.store, created, { queue: 'queue-b' });
      await expectCode(accept(ctx.store, created, { queue: 'queue-a' }), 'session.queue_mismatch');
      await ctx.store.createSession({ id: timerMade, queue: 'queue-a' });
      await expectCode(accept(ctx.store, timerMade, { queue: 'queue-b' }), 'session.queue_mismatch');
      expect((await accept(ctx.store, timerMade, { queue: 'queue-a' })).seq).toBe(1);
    });

    it('refuses one add and accepts the others made at the same moment (one batched statement)', async () => {
      const [ok, mismatched] = [ctx.id('queue-batch-ok'), ctx.id('queue-batch-mismatch')];
      await accept(ctx.store, mismatched, { queue: 'queue-a' });
      const outcomes = await Promise.allSettled([accept(ctx.store, ok, { queue: 'queue-b' }), accept(ctx.store, mismatched, { queue: 'queue-b' })]);
      expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.seq : (outcome.reason as { code: string }).code))).toEqual([1, 'session.queue_mismatch']);
    });

    it('refuses a malformed queue name with input.invalid, writing nothing', async () => {
      const id = ctx.id('queue-bad');
      await expectCode(accept(ctx.store, id, { queue: 'a:b' }), 'input.invalid');
      await expectCode(ctx.store.createSession({ id, queue: '' }), 'input.invalid');
      expect(await ctx.store.getSession(id)).toBeNull();
    });

    it("creates a child session on its parent's queue", async () => {
      const id = ctx.id('queue-parent');
      await ctx.store.createSession({ id, queue: 'queue-a' });
      const lease = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('expected the lease');
      await accept(ctx.store, id, { queue: 'queue-a' });
      await ctx.store.claimNextInput({ sessionId: id, leaseToken: lease.token });
      const spawn = spawnRequest({ id, token: lease.token }, 'call_q');
      expect(await ctx.store.spawnChild(spawn)).toMatchObject({ kind: 'created' });
      await expectCode(accept(ctx.store, spawn.childSessionId, { queue: 'queue-b' }), 'session.queue_mismatch');
    });
  });
}
