import { describe, expect, it } from 'vitest';
import { accept, expectCode, leased, running, usageRound, toolCall, type ContractContext } from '../../contract-helpers.js';

/** The reads and writes a drain starts with: lease and first claim together, the claim's extras, the run state. */
export function drainStartScenarios(ctx: ContractContext): void {
  describe('acquireLeaseAndClaim', () => {
    it('takes the lease and claims the lowest open input with it, returning the session as the claim left it', async () => {
      const id = ctx.id('both');
      await accept(ctx.store, id, { payload: { input: 'one' } });
      await accept(ctx.store, id, { payload: { input: 'two' } });
      const start = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 });
      if (!start.acquired) throw new Error('expected the lease');
      expect(start.token).toBeGreaterThan(0);
      expect(start.claimed).toMatchObject({ resumed: false, pendingInputs: true, input: { seq: 1, status: 'running', attempts: 1 } });
      expect(start.claimed?.session).toMatchObject({ id, status: 'running', nextSeq: 2, lease: { owner: 'worker-a', token: start.token } });
      expect(start.claimed?.session).toEqual(await ctx.store.getSession(id));
      expect(await ctx.store.getInput(id, 1)).toEqual(start.claimed?.input);
      // The token fences like any other.
      await ctx.store.commitStep({ sessionId: id, leaseToken: start.token, input: { seq: 1, status: 'done' } });
      const next = await ctx.store.claimNextInput({ sessionId: id, leaseToken: start.token });
      expect(next).toMatchObject({ pendingInputs: false, input: { seq: 2 } });
    });

    it('takes the lease of a session with nothing open and claims nothing, leaving it idle', async () => {
      const id = ctx.id('idle');
      await accept(ctx.store, id);
      const first = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 });
      if (!first.acquired || first.claimed === null) throw new Error('expected the lease and a claim');
      await ctx.store.commitStep({ sessionId: id, leaseToken: first.token, input: { seq: 1, status: 'done' } });
      await ctx.store.releaseLease({ sessionId: id, token: first.token });
      const again = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      expect(again).toMatchObject({ acquired: true, claimed: null });
      if (!again.acquired) throw new Error('expected the lease');
      expect(again.token).toBeGreaterThan(first.token);
      expect(await ctx.store.getSession(id)).toMatchObject({ status: 'idle', lease: { owner: 'worker-b', token: again.token } });
    });

    it('reports the live holder and claims nothing while another worker holds the lease', async () => {
      const { id } = await leased(ctx, 'held');
      await accept(ctx.store, id);
      const busy = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      expect(busy).toMatchObject({ acquired: false, holder: 'worker-a' });
      if (busy.acquired) throw new Error('expected no lease');
      expect(busy.retryAfterMs).toBeGreaterThan(0);
      expect((await ctx.store.getInput(id, 1))?.status).toBe('pending');
    });

    it('resumes an input a dead holder left running', async () => {
      const { id, token } = await running(ctx, 'dead', 1);
      await ctx.store.releaseLease({ sessionId: id, token });
      const start = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      expect(start).toMatchObject({ acquired: true, claimed: { resumed: true, pendingInputs: false, input: { seq: 1, attempts: 2 } } });
    });

    it('says whether a finish may be unpublished: set by each ending commit, cleared only by a release that says all were published', async () => {
      const id = ctx.id('owed');
      await accept(ctx.store, id);
      await accept(ctx.store, id);
      await accept(ctx.store, id);
      const start = async (owner: string) => {
        const lease = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner, ttlMs: 60_000 });
        if (!lease.acquired) throw new Error('expected the lease');
        return lease;
      };
      // A new session has ended nothing, so it owes nothing (its flag starts set, for rows that predate it).
      const first = await start('worker-a');
      expect(first.finishesOwed).toBe(false);
      await ctx.store.commitStep({ sessionId: id, leaseToken: first.token, input: { seq: 1, status: 'done' } });
      expect(await ctx.store.releaseLease({ sessionId: id, token: first.token, finishesPublished: true })).toBe(true);
      const second = await start('worker-b');
      expect(second.finishesOwed).toBe(false);
      // An ending commit sets it; a release without the promise leaves it set.
      await ctx.store.commitStep({ sessionId: id, leaseToken: second.token, input: { seq: 2, status: 'done' } });
      await ctx.store.releaseLease({ sessionId: id, token: second.token });
      const third = await start('worker-c');
      expect(third.finishesOwed).toBe(true);
      // A stale holder's release clears nothing, promise or not.
      expect(await ctx.store.releaseLease({ sessionId: id, token: second.token, finishesPublished: true })).toBe(false);
      await ctx.store.releaseLease({ sessionId: id, token: third.token, finishesPublished: true });
      const fourth = await start('worker-d');
      expect(fourth.finishesOwed).toBe(false);
      await expectCode(ctx.store.releaseLease({ sessionId: id, token: fourth.token, finishesPublished: 'yes' as unknown as boolean }), 'input.invalid');
    });

    it('claims nothing while a finish may be owed: the open input keeps its status and attempts, for a claim under the token after the repair (I6)', async () => {
      const id = ctx.id('owed-claim');
      await accept(ctx.store, id);
      await accept(ctx.store, id);
      const first = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 });
      if (!first.acquired) throw new Error('expected the lease');
      await ctx.store.commitStep({ sessionId: id, leaseToken: first.token, input: { seq: 1, status: 'done' } });
      // Released without the promise that input 1's input_finished is out.
      await ctx.store.releaseLease({ sessionId: id, token: first.token });
      const statusBefore = (await ctx.store.getSession(id))?.status;
      const owed = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      expect(owed).toMatchObject({ acquired: true, finishesOwed: true, claimed: undefined });
      if (!owed.acquired) throw new Error('expected the lease');
      expect(await ctx.store.getInput(id, 2)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(await ctx.store.getSession(id)).toMatchObject({ status: statusBefore, lease: { owner: 'worker-b', token: owed.token } });
      // Released again, as a drain whose repair failed: nothing was started, so nothing was counted.
      expect(await ctx.store.releaseLease({ sessionId: id, token: owed.token })).toBe(true);
      const again = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-c', ttlMs: 60_000 });
      if (!again.acquired) throw new Error('expected the lease');
      expect(again).toMatchObject({ finishesOwed: true, claimed: undefined });
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: again.token })).toMatchObject({ resumed: false, input: { seq: 2, status: 'running', attempts: 1 } });
      await ctx.store.commitStep({ sessionId: id, leaseToken: again.token, input: { seq: 2, status: 'done' } });
      await ctx.store.releaseLease({ sessionId: id, token: again.token });
      // Nothing open: nothing to leave to the caller.
      expect(await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-d', ttlMs: 60_000 })).toMatchObject({ acquired: true, finishesOwed: true, claimed: null });
    });

    it('throws session.not_found for a missing session and validates its arguments', async () => {
      await expectCode(ctx.store.acquireLeaseAndClaim({ sessionId: ctx.id('missing'), owner: 'w', ttlMs: 1000 }), 'session.not_found');
      await expectCode(ctx.store.acquireLeaseAndClaim({ sessionId: 'bad id!', owner: 'w', ttlMs: 1000 }), 'session.invalid_id');
      await expectCode(ctx.store.acquireLeaseAndClaim({ sessionId: ctx.id('ttl'), owner: 'w', ttlMs: 0 }), 'input.invalid');
    });
  });

  describe('claimNextInput extras', () => {
    it('returns the session and whether later inputs wait', async () => {
      const { id, token } = await leased(ctx, 'extras');
      await accept(ctx.store, id);
      await accept(ctx.store, id);
      const first = await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      expect(first).toMatchObject({ pendingInputs: true, session: { id, status: 'running' } });
      expect(first?.session).toEqual(await ctx.store.getSession(id));
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done' } });
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: token })).toMatchObject({ pendingInputs: false, input: { seq: 2 } });
    });

    it('refuses a stale token with lease.lost, with inputs open or not, and claims nothing', async () => {
      const { id, token } = await leased(ctx, 'stale');
      await ctx.store.releaseLease({ sessionId: id, token });
      const taken = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      if (!taken.acquired) throw new Error('expected the lease');
      await expectCode(ctx.store.claimNextInput({ sessionId: id, leaseToken: token }), 'lease.lost');
      await accept(ctx.store, id);
      await expectCode(ctx.store.claimNextInput({ sessionId: id, leaseToken: token }), 'lease.lost');
      expect((await ctx.store.getInput(id, 1))?.status).toBe('pending');
    });
  });

  describe('loadRunState', () => {
    it('reads the window, the input usage rows and the open ledger rows, as the separate reads do', async () => {
      const { id, token } = await running(ctx, 'state', 2);
      await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 0, message: { role: 'user', content: 'hi' } }],
        toolCalls: [toolCall('call-1', 'started')],
        usageRounds: [usageRound(1, 0, 10), usageRound(1, 1, 20)],
      });
      const state = await ctx.store.loadRunState(id, 1);
      expect(state.window).toEqual(await ctx.store.loadWindow(id));
      expect(state.window).toHaveLength(1);
      expect(state.usageRounds).toEqual(await ctx.store.getUsageRounds(id, 1));
      expect(state.usageRounds.map((row) => row.round)).toEqual([0, 1]);
      expect(state.openToolCalls).toEqual(await ctx.store.loadOpenToolCalls(id));
      expect(state.openToolCalls.map((row) => row.toolCallId)).toEqual(['call-1']);
      expect(await ctx.store.loadRunState(id, 2)).toMatchObject({ usageRounds: [] });
    });

    it('is empty for a session without history, and validates its arguments', async () => {
      expect(await ctx.store.loadRunState(ctx.id('none'), 1)).toEqual({ window: [], usageRounds: [], openToolCalls: [] });
      await expectCode(ctx.store.loadRunState("x'; DROP TABLE sessions; --", 1), 'session.invalid_id');
      await expectCode(ctx.store.loadRunState(ctx.id('seq'), 0), 'input.invalid');
    });
  });
}
