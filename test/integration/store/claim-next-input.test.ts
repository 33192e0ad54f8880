import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_NEXT_INPUTS } from '../../../src/store/inbox/claim-next-input-sql.js';
import { leasedSession, openStoreFixture, sessionId, type StoreFixture } from './store-fixture.js';

describe('claimNextInput', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('claim');
  });

  afterAll(async () => {
    await fx.close();
  });

  async function accept(id: string, text: string, mode: 'queue' | 'steer' = 'queue'): Promise<number> {
    return (await fx.store.acceptInput({ sessionId: id, kind: 'send', mode, payload: { text }, maxBytes: 1000 })).seq;
  }

  async function finish(id: string, token: number, seq: number): Promise<void> {
    await fx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq, status: 'done' } });
  }

  it('claims in seq order, resumes a running input after a takeover, and returns null when all are done', async () => {
    const id = sessionId('order');
    const token = await leasedSession(fx.store, id);
    for (const text of ['one', 'two', 'three']) await accept(id, text);

    const first = await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
    expect(first).toMatchObject({ resumed: false, input: { seq: 1, status: 'running', attempts: 1, payload: { text: 'one' } } });
    expect(first?.input.startedAt).toBeInstanceOf(Date);
    expect((await fx.store.getSession(id))?.status).toBe('running');
    await finish(id, token, 1);

    const second = await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
    expect(second).toMatchObject({ resumed: false, input: { seq: 2, attempts: 1 } });

    // The holder dies mid-input; another worker takes the session over.
    expect(await fx.store.releaseLease({ sessionId: id, token })).toBe(true);
    const takeover = await fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
    if (!takeover.acquired) throw new Error('expected the lease');
    await expect(fx.store.claimNextInput({ sessionId: id, leaseToken: token })).rejects.toMatchObject({ code: 'lease.lost' });

    const resumed = await fx.store.claimNextInput({ sessionId: id, leaseToken: takeover.token });
    expect(resumed).toMatchObject({ resumed: true, input: { seq: 2, status: 'running', attempts: 2 } });
    expect(resumed?.input.startedAt?.getTime()).toBe(second?.input.startedAt?.getTime());
    await finish(id, takeover.token, 2);

    expect((await fx.store.claimNextInput({ sessionId: id, leaseToken: takeover.token }))?.input.seq).toBe(3);
    await finish(id, takeover.token, 3);
    expect(await fx.store.claimNextInput({ sessionId: id, leaseToken: takeover.token })).toBeNull();
    expect((await fx.store.getSession(id))?.status).toBe('idle');
  });

  it('delivers steer inputs into the running one exactly once', async () => {
    const id = sessionId('steer');
    const token = await leasedSession(fx.store, id);
    await accept(id, 'main');
    await accept(id, 'also consider X', 'steer');
    await accept(id, 'next');
    await fx.store.claimNextInput({ sessionId: id, leaseToken: token });

    const pendingSteer = await fx.store.listInputs(id, { status: 'pending' });
    expect(pendingSteer.map((input) => [input.seq, input.mode])).toEqual([
      [2, 'steer'],
      [3, 'queue'],
    ]);
    await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: [{ inputSeq: 1, round: 1, message: { role: 'user', content: 'also consider X' } }],
      steer: { seqs: [2], intoInputSeq: 1 },
    });
    expect(await fx.store.getInput(id, 2)).toMatchObject({ status: 'done', steeredInto: 1, attempts: 1, result: null });

    await expect(
      fx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 2, message: { role: 'user', content: 'also consider X' } }],
        steer: { seqs: [2], intoInputSeq: 1 },
      }),
    ).rejects.toMatchObject({ code: 'state.conflict' });
    expect((await fx.store.loadWindow(id)).length).toBe(1);

    await finish(id, token, 1);
    expect((await fx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(3);
  });

  it('gives steered inputs their host\'s result, error and finish time in the host\'s finishing statement', async () => {
    const id = sessionId('steer-result');
    const token = await leasedSession(fx.store, id);
    for (const text of ['main', 'x', 'y', 'later']) await accept(id, text);
    await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
    await fx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [2, 3], intoInputSeq: 1 } });
    const result = {
      status: 'failed' as const,
      finalText: 'partial',
      rounds: 1,
      toolCalls: 0,
      usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 2, llmCalls: 1, costUsd: 0, costPicoUsd: 0 },
    };
    await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      input: { seq: 1, status: 'failed', result, errorCode: 'llm.timeout', errorMessage: 'slow' },
    });
    const rows = await fx.pool.query<{ seq: number; status: string; steeredInto: number | null; result: unknown; errorCode: string | null; sameEnd: boolean }>(
      `SELECT i.seq, i.status, i.steered_into AS "steeredInto", i.result, i.error_code AS "errorCode",
              i.finished_at IS NOT DISTINCT FROM h.finished_at AS "sameEnd"
         FROM session_inputs i JOIN session_inputs h ON h.session_id = i.session_id AND h.seq = 1
        WHERE i.session_id = $1 ORDER BY i.seq`,
      [id],
    );
    expect(rows.rows).toEqual([
      { seq: 1, status: 'failed', steeredInto: null, result, errorCode: 'llm.timeout', sameEnd: true },
      { seq: 2, status: 'done', steeredInto: 1, result: { ...result, steeredInto: 1 }, errorCode: 'llm.timeout', sameEnd: true },
      { seq: 3, status: 'done', steeredInto: 1, result: { ...result, steeredInto: 1 }, errorCode: 'llm.timeout', sameEnd: true },
      { seq: 4, status: 'pending', steeredInto: null, result: null, errorCode: null, sameEnd: false },
    ]);
    // The database refuses a host on an input that is not done.
    await expect(fx.pool.query('UPDATE session_inputs SET steered_into = 1 WHERE session_id = $1 AND seq = 4', [id])).rejects.toMatchObject({
      constraint: 'session_inputs_steered_done',
    });
  });

  it('lists inputs by status, in pages', async () => {
    const id = sessionId('list');
    const token = await leasedSession(fx.store, id);
    for (const text of ['a', 'b', 'c', 'd']) await accept(id, text);
    await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
    await finish(id, token, 1);
    expect((await fx.store.listInputs(id)).map((input) => input.seq)).toEqual([1, 2, 3, 4]);
    expect((await fx.store.listInputs(id, { status: ['pending'], afterSeq: 2, limit: 1 })).map((input) => input.seq)).toEqual([3]);
    expect((await fx.store.listInputs(id, { status: 'done' })).map((input) => input.seq)).toEqual([1]);
    await expect(fx.store.listInputs(id, { limit: 0 })).rejects.toMatchObject({ code: 'input.invalid' });
  });

  it('reads only open inputs: the plan uses session_inputs_open_idx and filters out no row', async () => {
    const id = sessionId('plan');
    const token = await leasedSession(fx.store, id);
    await fx.pool.query(
      `INSERT INTO session_inputs (session_id, seq, input_id, kind, payload, status)
       SELECT $1, g, 'old-' || g, 'send', '{}'::jsonb, 'done' FROM generate_series(1, 5000) AS g`,
      [id],
    );
    await fx.pool.query('UPDATE sessions SET next_seq = 5000 WHERE id = $1', [id]);
    await accept(id, 'new');
    await fx.pool.query('ANALYZE session_inputs');

    const client = await fx.pool.connect();
    try {
      await client.query('BEGIN');
      const records = JSON.stringify([{ session_id: id, lease_token: token }]);
      const explained = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${CLAIM_NEXT_INPUTS.text}`, [records]);
      await client.query('ROLLBACK');
      const plan = flatten((explained.rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
      // Only the inbox matters here; how the planner reaches the one sessions row is its business.
      const inbox = plan.filter((node) => node['Relation Name'] === 'session_inputs');
      expect(inbox.some((node) => node['Index Name'] === 'session_inputs_open_idx')).toBe(true);
      expect(inbox.filter((node) => (node['Rows Removed by Filter'] ?? 0) > 0)).toEqual([]);
      expect(inbox.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
    } finally {
      client.release();
    }
    expect((await fx.store.claimNextInput({ sessionId: id, leaseToken: token }))?.input.seq).toBe(5001);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
