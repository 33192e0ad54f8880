import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallWrite, UsageRoundWrite } from '../../../src/core/ports/session-store.js';
import type { ToolCallRecord } from '../../../src/core/session-types.js';
import { leasedSession, openStoreFixture, sessionId, type StoreFixture } from './store-fixture.js';

describe('commitStep: tool ledger and usage rounds', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('ledger');
  });

  afterAll(async () => {
    await fx.close();
  });

  function call(toolCallId: string, status: ToolCallWrite['status'], extra: Partial<ToolCallWrite> = {}): ToolCallWrite {
    return { toolCallId, inputSeq: 1, round: 0, name: 'lookup', args: { q: toolCallId }, status, ...extra };
  }

  async function ledgerRow(id: string, toolCallId: string): Promise<Omit<ToolCallRecord, 'sessionId'> | undefined> {
    const result = await fx.pool.query<Omit<ToolCallRecord, 'sessionId'>>(
      `SELECT tool_call_id AS "toolCallId", input_seq AS "inputSeq", round, name, args, status, attempts,
              idempotency_key AS "idempotencyKey", error_code AS "errorCode", started_at AS "startedAt",
              finished_at AS "finishedAt", duration_ms AS "durationMs"
         FROM tool_calls WHERE session_id = $1 AND tool_call_id = $2`,
      [id, toolCallId],
    );
    return result.rows[0];
  }

  it('records a call as started, then completed', async () => {
    const id = sessionId('ledger');
    const token = await leasedSession(fx.store, id);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'started'), call('call_2', 'started')] });
    const open = await fx.store.loadOpenToolCalls(id);
    expect(open.map((row) => row.toolCallId).sort()).toEqual(['call_1', 'call_2']);
    expect(open.find((row) => row.toolCallId === 'call_1')).toMatchObject({
      sessionId: id,
      status: 'started',
      attempts: 1,
      args: { q: 'call_1' },
      idempotencyKey: `${id}:call_1`,
      finishedAt: null,
      durationMs: null,
    });

    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'completed', { durationMs: 42 })] });
    expect((await fx.store.loadOpenToolCalls(id)).map((row) => row.toolCallId)).toEqual(['call_2']);
    const completed = await ledgerRow(id, 'call_1');
    expect(completed).toMatchObject({ status: 'completed', attempts: 1, durationMs: 42, errorCode: null });
    expect(completed?.finishedAt).toBeInstanceOf(Date);
  });

  it('counts a second start as a second attempt, and keeps in-doubt calls open', async () => {
    const id = sessionId('retry');
    const token = await leasedSession(fx.store, id);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'started')] });
    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'in_doubt')] });
    expect(await fx.store.loadOpenToolCalls(id)).toMatchObject([{ toolCallId: 'call_1', status: 'in_doubt', attempts: 1 }]);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'started')] });
    expect(await fx.store.loadOpenToolCalls(id)).toMatchObject([{ toolCallId: 'call_1', status: 'started', attempts: 2 }]);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'failed', { errorCode: 'tool.timeout', durationMs: 5 })] });
    expect(await ledgerRow(id, 'call_1')).toMatchObject({ status: 'failed', attempts: 2, errorCode: 'tool.timeout' });
    expect(await fx.store.loadOpenToolCalls(id)).toEqual([]);
  });

  it('keeps string arguments as strings and counts no attempt for a call aborted before it ran', async () => {
    const id = sessionId('aborted');
    const token = await leasedSession(fx.store, id);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call('call_1', 'aborted', { args: '{"raw":1}' })] });
    expect(await ledgerRow(id, 'call_1')).toMatchObject({ status: 'aborted', attempts: 0, args: '{"raw":1}' });
  });

  it('upserts usage per (input, round): a re-run round replaces its row', async () => {
    const id = sessionId('usage');
    const token = await leasedSession(fx.store, id);
    const round = (inputSeq: number, n: number, tokens: number): UsageRoundWrite => ({
      inputSeq,
      round: n,
      provider: 'openai',
      model: 'gpt-test',
      llmCalls: 1,
      promptTokens: tokens,
      completionTokens: 1,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      totalTokens: tokens + 1,
    });
    await fx.store.commitStep({ sessionId: id, leaseToken: token, usageRounds: [round(1, 0, 10), round(1, 1, 20)] });
    await fx.store.commitStep({ sessionId: id, leaseToken: token, usageRounds: [round(1, 0, 15)] });
    await fx.store.commitStep({ sessionId: id, leaseToken: token, usageRounds: [round(2, 0, 30)] });

    const all = await fx.store.getUsageRounds(id);
    expect(all.map((row) => [row.inputSeq, row.round, row.promptTokens])).toEqual([
      [1, 0, 15],
      [1, 1, 20],
      [2, 0, 30],
    ]);
    expect(all[0]).toMatchObject({ sessionId: id, provider: 'openai', model: 'gpt-test', totalTokens: 16 });
    expect((await fx.store.getUsageRounds(id, 2)).map((row) => row.promptTokens)).toEqual([30]);
  });
});
