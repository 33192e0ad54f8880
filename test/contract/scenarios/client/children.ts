import { describe, expect, it } from 'vitest';
import { accept, childPayload, expectCode, running, runResult, spawnRequest, type ContractContext } from '../../contract-helpers.js';

export function childSessionScenarios(ctx: ContractContext): void {
  /**
   * A parent running input 1, with two children (`call_b` spawned before `call_a`, so spawn order is
   * not id order) and a grandchild under `call_b`'s child, spawned under that child's lease.
   */
  async function tree(label: string) {
    const parent = await running(ctx, label);
    const b = spawnRequest(parent, 'call_b');
    const a = spawnRequest(parent, 'call_a', { wait: false, agent: 'helper' });
    await ctx.store.spawnChild(b);
    await ctx.store.spawnChild(a);
    const lease = await ctx.store.acquireLease({ sessionId: b.childSessionId, owner: 'worker-c', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('expected the child lease');
    const g = spawnRequest({ id: b.childSessionId, token: lease.token }, 'call_g', { rootSessionId: parent.id, depth: 2 });
    await ctx.store.spawnChild(g);
    return { parent, a: a.childSessionId, b: b.childSessionId, g: g.childSessionId, bToken: lease.token };
  }

  describe('listChildren', () => {
    it('lists the direct children in spawn order, with their call and state', async () => {
      const { parent, a, b } = await tree('children');
      const listed = await ctx.store.listChildren(parent.id);
      expect(listed).toEqual([
        { sessionId: b, agent: 'default', inputSeq: 1, toolCallId: 'call_b', wait: true, depth: 1, status: 'pending', createdAt: expect.any(Date) },
        { sessionId: a, agent: 'helper', inputSeq: 1, toolCallId: 'call_a', wait: false, depth: 1, status: 'pending', createdAt: expect.any(Date) },
      ]);
      expect(listed[0]!.createdAt.getTime()).toBeLessThanOrEqual(listed[1]!.createdAt.getTime());
      expect(await ctx.store.listChildren(ctx.id('nobody'))).toEqual([]);
      expect(await ctx.store.listChildren(a)).toEqual([]);
    });

    it('reports a child running, then its outcome: its first input result, then the status delivered', async () => {
      const { parent, b, bToken } = await tree('children-status');
      const statusOf = async (id: string) => (await ctx.store.listChildren(parent.id)).find((child) => child.sessionId === id)?.status;
      expect(await ctx.store.claimNextInput({ sessionId: b, leaseToken: bToken })).toMatchObject({ input: { seq: 1 } });
      expect(await statusOf(b)).toBe('running');
      await ctx.store.commitStep({ sessionId: b, leaseToken: bToken, input: { seq: 1, status: 'done', result: runResult({ status: 'hit_round_limit' }) } });
      expect(await statusOf(b)).toBe('hit_round_limit');
      await ctx.store.deliverChildResult(b, childPayload(b, 'call_b', { status: 'budget_exceeded' }));
      expect(await statusOf(b)).toBe('budget_exceeded');
    });
  });

  describe('requestCancelTree', () => {
    it('flags the session as requestCancel does, and every session below it as cancelled with its tree', async () => {
      const { parent, a, b, g } = await tree('cancel-tree');
      const earlier = await ctx.store.requestCancel(parent.id);
      const other = await running(ctx, 'cancel-tree-other');

      const cancelled = await ctx.store.requestCancelTree(parent.id);
      expect(cancelled.requestedAt).toEqual(earlier);
      expect([...cancelled.descendants].sort()).toEqual([a, b, g].sort());
      expect(await ctx.store.getSession(parent.id)).toMatchObject({ cancelRequestedAt: earlier, cascadeCancelledAt: null });
      for (const id of [a, b, g]) {
        const session = await ctx.store.getSession(id);
        expect(session?.cancelRequestedAt).toBeInstanceOf(Date);
        expect(session?.cascadeCancelledAt).toBeInstanceOf(Date);
      }
      expect(await ctx.store.getSession(other.id)).toMatchObject({ cancelRequestedAt: null, cascadeCancelledAt: null });

      // Asked again: every time kept.
      const flagged = await ctx.store.getSession(g);
      const again = await ctx.store.requestCancelTree(parent.id);
      expect(again.requestedAt).toEqual(earlier);
      expect(await ctx.store.getSession(g)).toMatchObject({ cancelRequestedAt: flagged?.cancelRequestedAt, cascadeCancelledAt: flagged?.cascadeCancelledAt });
    });

    it('cancels a subtree only, and answers no descendants for a leaf', async () => {
      const { parent, a, b, g } = await tree('cancel-subtree');
      const cancelled = await ctx.store.requestCancelTree(b);
      expect(cancelled.descendants).toEqual([g]);
      expect(await ctx.store.getSession(b)).toMatchObject({ cascadeCancelledAt: null });
      expect((await ctx.store.getSession(b))?.cancelRequestedAt).toEqual(cancelled.requestedAt);
      expect((await ctx.store.getSession(g))?.cascadeCancelledAt).toBeInstanceOf(Date);
      for (const id of [parent.id, a]) expect(await ctx.store.getSession(id)).toMatchObject({ cancelRequestedAt: null, cascadeCancelledAt: null });
      expect((await ctx.store.requestCancelTree(g)).descendants).toEqual([]);
    });

    it('is session.not_found for a session that does not exist', async () => {
      await expectCode(ctx.store.requestCancelTree(ctx.id('nobody')), 'session.not_found');
    });
  });

  describe('deleteSession of a tree', () => {
    it('deletes every session below it with their rows, and answers each one with its last lease token', async () => {
      const { parent, a, b, g, bToken } = await tree('delete-tree');
      await ctx.store.deliverChildResult(b, childPayload(b, 'call_b'));
      const other = await running(ctx, 'delete-tree-other');

      const deleted = await ctx.store.deleteSession(parent.id);
      expect(deleted?.leaseToken).toBe(parent.token);
      const descendants = [...(deleted?.descendants ?? [])].sort((x, y) => (x.sessionId < y.sessionId ? -1 : 1));
      expect(descendants).toEqual(
        [
          { sessionId: a, leaseToken: 0 },
          { sessionId: b, leaseToken: bToken },
          { sessionId: g, leaseToken: 0 },
        ].sort((x, y) => (x.sessionId < y.sessionId ? -1 : 1)),
      );
      for (const id of [parent.id, a, b, g]) {
        expect(await ctx.store.getSession(id)).toBeNull();
        expect(await ctx.store.listInputs(id)).toEqual([]);
      }
      expect(await ctx.store.getSession(other.id)).not.toBeNull();

      // A child id taken again is a new session, no child of anyone.
      await accept(ctx.store, b);
      expect(await ctx.store.getSession(b)).toMatchObject({ parentSessionId: null, rootSessionId: b, depth: 0, spawn: null });
    });

    it('deletes a subtree only', async () => {
      const { parent, a, b, g } = await tree('delete-subtree');
      expect((await ctx.store.deleteSession(b))?.descendants).toEqual([{ sessionId: g, leaseToken: 0 }]);
      expect(await ctx.store.getSession(g)).toBeNull();
      expect((await ctx.store.listChildren(parent.id)).map((child) => child.sessionId)).toEqual([a]);
    });
  });
}
