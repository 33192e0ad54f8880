import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../../contract-helpers.js';
import { accept, assistant, expectCode, PENDING, running, runResult, snapshot, toolCall, usageRound, user } from '../../contract-helpers.js';

/** A running session whose holder has been replaced: returns the stale token and the new one. */
async function takenOver(ctx: ContractContext, label: string): Promise<{ id: string; stale: number; current: number }> {
  const { id, token } = await running(ctx, label, 2);
  await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user('before') }] });
  expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(true);
  const next = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
  if (!next.acquired) throw new Error('expected the lease');
  expect(next.token).toBeGreaterThan(token);
  return { id, stale: token, current: next.token };
}

export function fencingScenarios(ctx: ContractContext): void {
  describe('fencing', () => {
    it('refuses a whole step under a stale token with lease.lost and writes none of it', async () => {
      const { id, stale } = await takenOver(ctx, 'stale-step');
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({
          sessionId: id,
          leaseToken: stale,
          messages: [{ inputSeq: 1, round: 0, message: assistant('zombie') }],
          pending: PENDING,
          toolCalls: [toolCall('call_1', 'started')],
          usageRounds: [usageRound(1, 0, 10)],
          steer: { seqs: [2], intoInputSeq: 1 },
          input: { seq: 1, status: 'done', result: runResult() },
        }),
        'lease.lost',
      );
      const after = await snapshot(ctx.store, id);
      expect(after).toEqual(before);
      expect(after.session).toMatchObject({ pending: null, nextMessageSeq: 1, stats: { inputs: 0 } });
      expect(after.inputs.map((input) => input.status)).toEqual(['running', 'pending']);
    });

    it('refuses a stale fold and a stale pending clear', async () => {
      const { id, stale, current } = await takenOver(ctx, 'stale-fold');
      await ctx.store.commitStep({ sessionId: id, leaseToken: current, pending: PENDING });
      const before = await snapshot(ctx.store, id);
      await expectCode(ctx.store.commitStep({ sessionId: id, leaseToken: stale, pending: null }), 'lease.lost');
      await expectCode(
        ctx.store.commitStep({
          sessionId: id,
          leaseToken: stale,
          compaction: { foldSeqs: [1], record: { noteSeq: 1, fromSeq: 1, toSeq: 1, estimatedTokensBefore: 5, estimatedTokensAfter: 1, model: null } },
        }),
        'lease.lost',
      );
      await expectCode(ctx.store.commitStep({ sessionId: id, leaseToken: stale }), 'lease.lost');
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });

    it('refuses a stale claim with lease.lost and leaves the inbox as it was', async () => {
      const id = ctx.id('stale-claim');
      await ctx.store.createSession({ id });
      await accept(ctx.store, id);
      const first = await ctx.store.acquireLease({ sessionId: id, owner: 'a', ttlMs: 60_000 });
      if (!first.acquired) throw new Error('expected the lease');
      await ctx.store.releaseLease({ sessionId: id, token: first.token });
      await ctx.store.acquireLease({ sessionId: id, owner: 'b', ttlMs: 60_000 });
      const before = await snapshot(ctx.store, id);
      await expectCode(ctx.store.claimNextInput({ sessionId: id, leaseToken: first.token }), 'lease.lost');
      expect(await snapshot(ctx.store, id)).toEqual(before);
      expect(before.inputs[0]).toMatchObject({ status: 'pending', attempts: 0, startedAt: null });
      expect(before.session?.status).toBe('idle');
    });

    it('refuses a stale clearCancel with lease.lost and keeps the cancel request', async () => {
      const { id, stale } = await takenOver(ctx, 'stale-cancel');
      const requested = await ctx.store.requestCancel(id);
      await expectCode(ctx.store.clearCancel({ sessionId: id, leaseToken: stale }), 'lease.lost');
      expect((await ctx.store.getSession(id))?.cancelRequestedAt).toEqual(requested);
    });

    it('refuses a token that was never issued (ahead of the current one)', async () => {
      const { id, token } = await running(ctx, 'future');
      const before = await snapshot(ctx.store, id);
      const future = { sessionId: id, leaseToken: token + 1 };
      await expectCode(ctx.store.commitStep({ ...future, messages: [{ inputSeq: 1, round: 0, message: user('x') }] }), 'lease.lost');
      await expectCode(ctx.store.claimNextInput(future), 'lease.lost');
      await expectCode(ctx.store.clearCancel(future), 'lease.lost');
      await expectCode(ctx.store.renewLease({ sessionId: id, token: token + 1, ttlMs: 1000 }), 'lease.lost');
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });

    // Deleting a session and creating the id again (acceptInput does so on its own) must not restart
    // its tokens: a zombie still holding a token of the deleted session would pass the fence of the
    // new one and append messages or finish its input (I3). Tokens come from one counter of
    // the whole store (Postgres: the `lease_token_seq` sequence), not from the session row.
    it('never reuses a token: a zombie of a deleted session is fenced out of the re-created one', async () => {
      const { id, token } = await running(ctx, 'reborn');
      expect(await ctx.store.deleteSession(id)).toEqual({ leaseToken: expect.any(Number), descendants: [] });
      await accept(ctx.store, id, { payload: { input: 'a new life' } });
      expect((await ctx.store.getSession(id))?.lease).toEqual({ owner: null, token: 0, expiresAt: null });
      const next = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      if (!next.acquired) throw new Error('expected the lease');
      expect(next.token).toBeGreaterThan(token);
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: next.token })).toMatchObject({ input: { seq: 1, attempts: 1 } });
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({
          sessionId: id,
          leaseToken: token,
          messages: [{ inputSeq: 1, round: 0, message: assistant('from the old life') }],
          input: { seq: 1, status: 'done' },
        }),
        'lease.lost',
      );
      await expectCode(ctx.store.claimNextInput({ sessionId: id, leaseToken: token }), 'lease.lost');
      await expectCode(ctx.store.clearCancel({ sessionId: id, leaseToken: token }), 'lease.lost');
      await expectCode(ctx.store.renewLease({ sessionId: id, token, ttlMs: 60_000 }), 'lease.lost');
      expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(false);
      expect(await snapshot(ctx.store, id)).toEqual(before);
      expect(before.session?.lease).toMatchObject({ owner: 'worker-b', token: next.token });
    });

    it('fences out the holder of a session deleted under it: lease.lost, nothing recreated', async () => {
      const { id, token } = await running(ctx, 'deleted');
      expect(await ctx.store.deleteSession(id)).toEqual({ leaseToken: expect.any(Number), descendants: [] });
      const fenced = { sessionId: id, leaseToken: token };
      await expectCode(ctx.store.commitStep({ ...fenced, messages: [{ inputSeq: 1, round: 0, message: user('x') }] }), 'lease.lost');
      await expectCode(ctx.store.claimNextInput(fenced), 'lease.lost');
      await expectCode(ctx.store.clearCancel(fenced), 'lease.lost');
      await expectCode(ctx.store.renewLease({ sessionId: id, token, ttlMs: 1000 }), 'lease.lost');
      expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(false);
      expect(await ctx.store.getSession(id)).toBeNull();
    });
  });
}
