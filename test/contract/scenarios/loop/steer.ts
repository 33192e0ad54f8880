import { describe, expect, it } from 'vitest';
import type { InputTransition } from '../../../../src/core/ports/session-store.js';
import { accept, expectCode, leased, running, runResult, snapshot, user, type ContractContext } from '../../contract-helpers.js';

export function steerScenarios(ctx: ContractContext): void {
  describe('commitStep: steering', () => {
    it('delivers pending inputs into the running one: done, naming their host, no result yet, once', async () => {
      const { id, token } = await running(ctx, 'steer', 4);
      const step = await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [user('also consider X'), user('and Y')].map((message) => ({ inputSeq: 1, round: 1, message })),
        steer: { seqs: [2, 3], intoInputSeq: 1 },
      });
      expect(step.messageSeqs).toEqual([1, 2]);
      for (const seq of [2, 3]) {
        const input = await ctx.store.getInput(id, seq);
        expect(input).toMatchObject({ status: 'done', steeredInto: 1, attempts: 1, result: null, errorCode: null, errorMessage: null });
        expect(input?.startedAt).toBeInstanceOf(Date);
        expect(input?.finishedAt).toBeInstanceOf(Date);
        expect(input?.startedAt?.getTime()).toBeGreaterThanOrEqual(input?.acceptedAt.getTime() ?? Infinity);
      }
      expect(await ctx.store.getInput(id, 1)).toMatchObject({ status: 'running', attempts: 1, steeredInto: null });
      expect((await ctx.store.getInput(id, 4))?.steeredInto).toBeNull();
      // Delivered inputs end inside the run they joined: they do not count as inputs of their own.
      expect((await ctx.store.getSession(id))?.stats.inputs).toBe(0);

      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done' } });
      // The host finished without a result: so did they, and they stay out of the claim order.
      expect(await ctx.store.getInput(id, 2)).toMatchObject({ status: 'done', steeredInto: 1, result: null, errorCode: null });
      expect((await ctx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(4);
    });

    it.each<[string, InputTransition['status'], Partial<InputTransition>]>([
      ['done with a result', 'done', { result: runResult({ output: { answer: 42 } }) }],
      ['failed with an error', 'failed', { result: runResult({ status: 'failed' }), errorCode: 'llm.timeout', errorMessage: 'slow' }],
      ['failed with an error and no result', 'failed', { errorCode: 'internal' }],
      ['cancelled', 'cancelled', { result: runResult({ status: 'cancelled' }), errorCode: 'run.cancelled' }],
    ])('steered inputs finish with their host (%s): its result plus steeredInto, its error (I6)', async (_label, status, outcome) => {
      const { id, token } = await running(ctx, 'steer-host', 4);
      await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [user('also consider X'), user('and Y')].map((message) => ({ inputSeq: 1, round: 1, message })),
        steer: { seqs: [2, 3], intoInputSeq: 1 },
      });
      const delivered = await ctx.store.listInputs(id);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status, ...outcome } });

      const host = await ctx.store.getInput(id, 1);
      expect(host).toMatchObject({
        status,
        steeredInto: null,
        result: outcome.result ?? null,
        errorCode: outcome.errorCode ?? null,
        errorMessage: outcome.errorMessage ?? null,
      });
      for (const seq of [2, 3]) {
        const input = await ctx.store.getInput(id, seq);
        expect(input).toMatchObject({
          status: 'done',
          steeredInto: 1,
          attempts: 1,
          errorCode: outcome.errorCode ?? null,
          errorMessage: outcome.errorMessage ?? null,
        });
        expect(input?.result).toEqual(outcome.result === undefined ? null : { ...outcome.result, steeredInto: 1 });
        // They end when the run they joined ends; their start (delivery) stays.
        expect(input?.finishedAt).toEqual(host?.finishedAt);
        expect(input?.startedAt).toEqual(delivered[seq - 1]?.startedAt);
      }
      // An input that was not steered is untouched, and is the next one claimed.
      expect(await ctx.store.getInput(id, 4)).toMatchObject({ status: 'pending', steeredInto: null, result: null, errorCode: null });
      // The host's run is counted once; the steered inputs are part of it.
      expect((await ctx.store.getSession(id))?.stats).toMatchObject({ inputs: 1, rounds: outcome.result?.rounds ?? 0 });
      expect((await ctx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(4);
    });

    it('copies a host\'s result only to the inputs steered into it', async () => {
      const { id, token } = await running(ctx, 'steer-two-hosts', 4);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [2], intoInputSeq: 1 } });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done', result: runResult({ finalText: 'first' }) } });
      expect((await ctx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(3);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [4], intoInputSeq: 3 } });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 3, status: 'done', result: runResult({ finalText: 'second' }) } });

      const inputs = await ctx.store.listInputs(id);
      expect(inputs.map((input) => [input.seq, input.status, input.steeredInto, input.result?.finalText, input.result?.steeredInto])).toEqual([
        [1, 'done', null, 'first', undefined],
        [2, 'done', 1, 'first', 1],
        [3, 'done', null, 'second', undefined],
        [4, 'done', 3, 'second', 3],
      ]);
      expect(await ctx.store.claimNextInput({ sessionId: id, leaseToken: token })).toBeNull();
      expect((await ctx.store.getSession(id))?.stats.inputs).toBe(2);
    });

    it('refuses a result whose steeredInto is not a positive integer with input.invalid', async () => {
      const { id, token } = await running(ctx, 'steer-bad-result');
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done', result: { ...runResult(), steeredInto: 0 } } }),
        'input.invalid',
      );
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });

    it.each([
      ['already delivered', [2]],
      ['already delivered, next to a pending one', [3, 2]],
      ['never accepted, next to a pending one', [3, 7]],
    ])('refuses to deliver an input that is %s with state.conflict, rolling the step back', async (_label, seqs) => {
      const { id, token } = await running(ctx, 'resteer', 3);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [2], intoInputSeq: 1 } });
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({
          sessionId: id,
          leaseToken: token,
          messages: [{ inputSeq: 1, round: 1, message: user('again') }],
          steer: { seqs, intoInputSeq: 1 },
        }),
        'state.conflict',
      );
      expect(await snapshot(ctx.store, id)).toEqual(before);
      expect((await ctx.store.getInput(id, 3))?.status).toBe('pending');
    });

    it('refuses to steer into an input that is not running', async () => {
      const { id, token } = await leased(ctx, 'notrunning');
      await accept(ctx.store, id);
      await accept(ctx.store, id);
      const before = await snapshot(ctx.store, id);
      await expectCode(ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [2], intoInputSeq: 1 } }), 'state.conflict');
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });
  });
}
