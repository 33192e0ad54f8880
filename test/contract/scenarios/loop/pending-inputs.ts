import { describe, expect, it } from 'vitest';
import { accept, assistant, leased, running, runResult, type ContractContext } from '../../contract-helpers.js';

/** `StepCommitResult.pendingInputs`: whether inputs still wait as the step commits. */
export function pendingInputScenarios(ctx: ContractContext): void {
  const reply = [{ inputSeq: 1, round: 0, message: assistant('working') }];

  describe('commitStep: pendingInputs', () => {
    it('is false when no other input was accepted', async () => {
      const { id, token } = await running(ctx, 'pending-none');
      expect(await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: reply })).toEqual({ messageSeqs: [1], pendingInputs: false, pendingSteers: false });
    });

    it('is true while a later input is pending, and the running input does not count', async () => {
      const { id, token } = await running(ctx, 'pending-later', 2);
      expect((await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: reply })).pendingInputs).toBe(true);
      expect((await ctx.store.getInput(id, 2))?.status).toBe('pending');
    });

    it('is true for inputs accepted before any was claimed', async () => {
      const { id, token } = await leased(ctx, 'pending-unclaimed');
      await accept(ctx.store, id);
      expect((await ctx.store.commitStep({ sessionId: id, leaseToken: token })).pendingInputs).toBe(true);
    });

    it('is false after a step that steers the only pending input, true while another still waits', async () => {
      const only = await running(ctx, 'pending-steered', 2);
      const steered = await ctx.store.commitStep({ sessionId: only.id, leaseToken: only.token, messages: reply, steer: { seqs: [2], intoInputSeq: 1 } });
      expect(steered.pendingInputs).toBe(false);

      const more = await running(ctx, 'pending-steer-one', 3);
      expect((await ctx.store.commitStep({ sessionId: more.id, leaseToken: more.token, steer: { seqs: [2], intoInputSeq: 1 } })).pendingInputs).toBe(true);
      expect((await ctx.store.commitStep({ sessionId: more.id, leaseToken: more.token, steer: { seqs: [3], intoInputSeq: 1 } })).pendingInputs).toBe(false);
    });

    it('is true after a finishing step with a pending follower, false after the last one finishes', async () => {
      const { id, token } = await running(ctx, 'pending-follower', 2);
      const first = await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: reply, input: { seq: 1, status: 'done', result: runResult() } });
      expect(first.pendingInputs).toBe(true);
      expect((await ctx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(2);
      const second = await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 2, status: 'done', result: runResult() } });
      expect(second.pendingInputs).toBe(false);
    });

    it('is false after a step that steers the only follower and finishes the host', async () => {
      const { id, token } = await running(ctx, 'pending-steer-finish', 2);
      const step = await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        steer: { seqs: [2], intoInputSeq: 1 },
        input: { seq: 1, status: 'done', result: runResult() },
      });
      expect(step.pendingInputs).toBe(false);
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: token })).toBeNull();
    });
  });

  describe('pendingSteers: whether a pending input would change the running one', () => {
    it('is false while only queued inputs wait, on claims and on steps alike', async () => {
      const { id, token } = await leased(ctx, 'steers-queued');
      for (let i = 1; i <= 3; i += 1) await accept(ctx.store, id, { inputId: `q-${i}` });
      const claimed = await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      expect(claimed).toMatchObject({ pendingInputs: true, pendingSteers: false });
      expect(await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: reply })).toMatchObject({ pendingInputs: true, pendingSteers: false });
    });

    it.each(['steer', 'interrupt'] as const)('is true while a %s input waits, and false again once it is steered or run', async (mode) => {
      const { id, token } = await leased(ctx, `steers-${mode}`);
      await accept(ctx.store, id, { inputId: 'host' });
      await accept(ctx.store, id, { inputId: 'queued' });
      const claimed = await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      expect(claimed).toMatchObject({ pendingInputs: true, pendingSteers: false });
      await accept(ctx.store, id, { inputId: 'late', mode });
      expect(await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: reply })).toMatchObject({ pendingInputs: true, pendingSteers: true });
      const delivered = await ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [3], intoInputSeq: 1 } });
      expect(delivered).toMatchObject({ pendingInputs: true, pendingSteers: false });
    });

    it('reports a waiting steer on the claim that starts the drain', async () => {
      const id = ctx.id('steers-claim');
      await accept(ctx.store, id, { inputId: 'first' });
      await accept(ctx.store, id, { inputId: 'steer', mode: 'steer' });
      const start = await ctx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 });
      expect(start).toMatchObject({ acquired: true, claimed: { input: { seq: 1 }, pendingInputs: true, pendingSteers: true } });
    });
  });
}
