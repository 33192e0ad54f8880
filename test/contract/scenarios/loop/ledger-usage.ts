import { describe, expect, it } from 'vitest';
import { leased, toolCall, usageRound, type ContractContext } from '../../contract-helpers.js';

export function ledgerUsageScenarios(ctx: ContractContext): void {
  describe('commitStep: tool ledger', () => {
    it('records a call as started (open), then completed (no longer open)', async () => {
      const { id, token } = await leased(ctx, 'ledger');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_1', 'started'), toolCall('call_2', 'started', { round: 3, name: 'fetch' })] });
      const open = await ctx.store.loadOpenToolCalls(id);
      expect(open.map((row) => row.toolCallId).sort()).toEqual(['call_1', 'call_2']);
      expect(open.find((row) => row.toolCallId === 'call_1')).toEqual({
        sessionId: id,
        toolCallId: 'call_1',
        inputSeq: 1,
        round: 0,
        name: 'lookup',
        args: { q: 'call_1' },
        status: 'started',
        attempts: 1,
        idempotencyKey: `${id}:call_1`,
        errorCode: null,
        startedAt: expect.any(Date),
        finishedAt: null,
        durationMs: null,
      });
      expect(open.find((row) => row.toolCallId === 'call_2')).toMatchObject({ round: 3, name: 'fetch' });

      await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_1', 'completed', { durationMs: 42 })] });
      expect((await ctx.store.loadOpenToolCalls(id)).map((row) => row.toolCallId)).toEqual(['call_2']);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_2', 'aborted')] });
      expect(await ctx.store.loadOpenToolCalls(id)).toEqual([]);
    });

    it('counts a second start as a second attempt; in_doubt stays open without counting; failed closes', async () => {
      const { id, token } = await leased(ctx, 'retry');
      const write = (status: Parameters<typeof toolCall>[1], extra = {}) =>
        ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_1', status, extra)] });
      await write('started');
      const [first] = await ctx.store.loadOpenToolCalls(id);
      await write('in_doubt');
      expect(await ctx.store.loadOpenToolCalls(id)).toEqual([{ ...first, status: 'in_doubt' }]);
      await write('started', { args: { q: 'retried' } });
      const [second] = await ctx.store.loadOpenToolCalls(id);
      expect(second).toMatchObject({ status: 'started', attempts: 2, args: { q: 'retried' }, finishedAt: null });
      expect(second?.startedAt.getTime()).toBeGreaterThanOrEqual(first?.startedAt.getTime() ?? Infinity);
      await write('failed', { errorCode: 'tool.timeout', durationMs: 5 });
      expect(await ctx.store.loadOpenToolCalls(id)).toEqual([]);
      await write('started');
      expect(await ctx.store.loadOpenToolCalls(id)).toMatchObject([{ status: 'started', attempts: 3, errorCode: null, durationMs: null, finishedAt: null }]);
    });

    it('counts no attempt for a call first recorded in doubt (it was never started)', async () => {
      const { id, token } = await leased(ctx, 'doubt');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_1', 'in_doubt', { args: '{"raw":1}' })] });
      expect(await ctx.store.loadOpenToolCalls(id)).toMatchObject([{ status: 'in_doubt', attempts: 0, args: '{"raw":1}', finishedAt: null }]);
    });

    it('reads arguments back as JSON: strings stay strings, absent ones are null', async () => {
      const { id, token } = await leased(ctx, 'args');
      await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        toolCalls: [toolCall('a', 'started', { args: '42' }), toolCall('b', 'started', { args: undefined }), toolCall('c', 'started', { args: [1, { x: null }] })],
      });
      const open = await ctx.store.loadOpenToolCalls(id);
      expect(Object.fromEntries(open.map((row) => [row.toolCallId, row.args]))).toEqual({ a: '42', b: null, c: [1, { x: null }] });
    });

    it('lists open calls in start order: a call started again moves behind those started since', async () => {
      const { id, token } = await leased(ctx, 'order');
      for (const callId of ['call_b', 'call_a', 'call_c']) {
        await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall(callId, 'started')] });
      }
      expect((await ctx.store.loadOpenToolCalls(id)).map((row) => row.toolCallId)).toEqual(['call_b', 'call_a', 'call_c']);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_b', 'started')] });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [toolCall('call_a', 'in_doubt')] });
      expect((await ctx.store.loadOpenToolCalls(id)).map((row) => row.toolCallId)).toEqual(['call_a', 'call_c', 'call_b']);
    });
  });

  describe('commitStep: usage rounds', () => {
    it('upserts usage per (input, round): a re-run round replaces its row; rows come by input then round', async () => {
      const { id, token } = await leased(ctx, 'usage');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, usageRounds: [usageRound(2, 0, 30), usageRound(1, 1, 20)] });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, usageRounds: [usageRound(1, 0, 10)] });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, usageRounds: [{ ...usageRound(1, 0, 15), model: 'gpt-other', llmCalls: 3, costPicoUsd: 2_250_000 }] });

      const all = await ctx.store.getUsageRounds(id);
      expect(all.map((row) => [row.inputSeq, row.round, row.promptTokens])).toEqual([
        [1, 0, 15],
        [1, 1, 20],
        [2, 0, 30],
      ]);
      expect(all[0]).toEqual({
        sessionId: id,
        inputSeq: 1,
        round: 0,
        provider: 'openai',
        model: 'gpt-other',
        llmCalls: 3,
        promptTokens: 15,
        completionTokens: 1,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        totalTokens: 16,
        costPicoUsd: 2_250_000,
        createdAt: expect.any(Date),
      });
      expect((await ctx.store.getUsageRounds(id, 1)).map((row) => row.round)).toEqual([0, 1]);
      expect((await ctx.store.getUsageRounds(id, 2)).map((row) => row.promptTokens)).toEqual([30]);
      expect(await ctx.store.getUsageRounds(id, 3)).toEqual([]);
    });
  });
}
