import { describe, expect, it } from 'vitest';
import { accept, assistant, expectCode, leased, PENDING, running, runResult, snapshot, type ContractContext } from '../../contract-helpers.js';

export function finishScenarios(ctx: ContractContext): void {
  describe('commitStep: finishing an input', () => {
    it.each(['done', 'failed', 'cancelled'] as const)('ends a running input as %s with its result and adds the run to the stats once', async (status) => {
      const { id, token } = await running(ctx, `finish-${status}`);
      const result = runResult({ status: status === 'done' ? 'completed' : status, output: { answer: [1, 2] } });
      const errorCode = status === 'failed' ? 'llm.timeout' : undefined;
      const step = await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 1, message: assistant('done') }],
        input: { seq: 1, status, result, ...(errorCode === undefined ? {} : { errorCode, errorMessage: 'slow' }) },
      });
      expect(step.messageSeqs).toEqual([1]);

      const input = await ctx.store.getInput(id, 1);
      expect(input).toMatchObject({ status, result, errorCode: errorCode ?? null, errorMessage: errorCode === undefined ? null : 'slow' });
      expect(input?.finishedAt).toBeInstanceOf(Date);
      const session = await ctx.store.getSession(id);
      expect(session?.status).toBe('idle');
      expect(session?.stats).toEqual({
        inputs: 1,
        rounds: 2,
        llmCalls: 2,
        toolCalls: 3,
        promptTokens: 100,
        completionTokens: 20,
        cachedTokens: 10,
        cacheWriteTokens: 0,
        reasoningTokens: 5,
        totalTokens: 120,
        costUsd: 0.0000015,
        costPicoUsd: 1_500_000,
        firstInputAt: input?.finishedAt,
        lastInputAt: input?.finishedAt,
      });
    });

    it('refuses to finish an input twice with state.conflict: the step is not written and the stats stay', async () => {
      const { id, token } = await running(ctx, 'twice');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done', result: runResult() } });
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({
          sessionId: id,
          leaseToken: token,
          messages: [{ inputSeq: 1, round: 2, message: assistant('again') }],
          pending: PENDING,
          input: { seq: 1, status: 'failed', errorCode: 'internal', errorMessage: 'boom', result: runResult() },
        }),
        'state.conflict',
      );
      const after = await snapshot(ctx.store, id);
      expect(after).toEqual(before);
      expect(after.session).toMatchObject({ nextMessageSeq: 0, pending: null, stats: { inputs: 1, rounds: 2 } });
      expect(after.inputs[0]).toMatchObject({ status: 'done', errorCode: null });
    });

    it.each([
      ['still pending', 2],
      ['never accepted', 5],
    ])('refuses to finish an input that is %s', async (_label, seq) => {
      const { id, token } = await running(ctx, 'notrunning', 2);
      const before = await snapshot(ctx.store, id);
      await expectCode(ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq, status: 'done', result: runResult() } }), 'state.conflict');
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });

    it('finishes without a result: counted as an input, no usage', async () => {
      const { id, token } = await running(ctx, 'noresult');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'failed', errorCode: 'internal' } });
      expect(await ctx.store.getInput(id, 1)).toMatchObject({ status: 'failed', result: null, errorCode: 'internal', errorMessage: null });
      expect((await ctx.store.getSession(id))?.stats).toMatchObject({ inputs: 1, rounds: 0, llmCalls: 0, toolCalls: 0, totalTokens: 0 });
    });

    it('leaves the session waiting_for_input after such a result; stats add up; first time kept, last time moves', async () => {
      const { id, token } = await running(ctx, 'waiting', 2);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done', result: runResult({ status: 'waiting_for_input' }) } });
      const first = await ctx.store.getSession(id);
      expect(first?.status).toBe('waiting_for_input');

      expect((await ctx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(2);
      expect((await ctx.store.getSession(id))?.status).toBe('running');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 2, status: 'done', result: runResult({ rounds: 1, toolCalls: 0 }) } });
      const second = await ctx.store.getSession(id);
      expect(second).toMatchObject({ status: 'idle', stats: { inputs: 2, rounds: 3, toolCalls: 3, llmCalls: 4, totalTokens: 240 } });
      expect(second?.stats.firstInputAt).toEqual(first?.stats.firstInputAt);
      expect(second?.stats.lastInputAt?.getTime()).toBeGreaterThanOrEqual(first?.stats.lastInputAt?.getTime() ?? Infinity);
      expect(second?.stats.lastInputAt).toEqual((await ctx.store.getInput(id, 2))?.finishedAt);
    });

    it('keeps the session waiting_for_input when a question still waits after another input fails', async () => {
      const { id, token } = await running(ctx, 'still-waiting', 2);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, pending: PENDING, input: { seq: 1, status: 'done', result: runResult({ status: 'waiting_for_input' }) } });
      await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 2, status: 'failed', errorCode: 'session.pending', result: runResult({ status: 'failed' }) } });
      expect((await ctx.store.getSession(id))?.status).toBe('waiting_for_input');
    });

    it('steers and finishes in one step', async () => {
      const { id, token } = await leased(ctx, 'steer-finish');
      await accept(ctx.store, id);
      await accept(ctx.store, id, { mode: 'steer' });
      await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [2], intoInputSeq: 1 }, input: { seq: 1, status: 'done', result: runResult() } });
      const inputs = await ctx.store.listInputs(id);
      expect(inputs.map((input) => [input.status, input.steeredInto])).toEqual([
        ['done', null],
        ['done', 1],
      ]);
      expect(inputs[1]?.result).toEqual({ ...runResult(), steeredInto: 1 });
      expect(inputs[1]?.finishedAt).toEqual(inputs[0]?.finishedAt);
      expect((await ctx.store.getSession(id))?.stats.inputs).toBe(1);
    });
  });
}
