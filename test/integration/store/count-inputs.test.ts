import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INPUT_STATUSES } from '../../../src/core/session-types.js';
import { COUNT_INPUTS_SQL } from '../../../src/store/inbox/count-inputs-sql.js';
import { openStoreFixture, sessionId, statementsSent, type StoreFixture } from './store-fixture.js';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

/** Statuses in turn, by seq: 5,000 inputs make 1,000 of each. */
/** The statuses the bulk inboxes hold, in turn; no `waiting` one (only `parkInput` writes it). */
const BULK_STATUSES = ['pending', 'running', 'done', 'failed', 'cancelled'] as const;
const statusOf = (seq: number) => BULK_STATUSES[seq % BULK_STATUSES.length]!;

describe('countInputs (SessionQueue.stats)', () => {
  let fx: StoreFixture;
  const big = sessionId('big');
  const small = sessionId('small');

  beforeAll(async () => {
    fx = await openStoreFixture('count_inputs');
    // Bulk inboxes straight in SQL, statuses in turn (as statusOf): 5,000 inputs with 2 KB payloads, and 10.
    for (const [id, inputs] of [
      [big, 5_000],
      [small, 10],
    ] as const) {
      await fx.store.createSession({ id });
      await fx.pool.query(
        `INSERT INTO session_inputs (session_id, seq, input_id, kind, payload, status)
         SELECT $1, g, 'in-' || g, 'send', jsonb_build_object('input', repeat('x', 2000)),
                (ARRAY['pending', 'running', 'done', 'failed', 'cancelled'])[g % 5 + 1]
           FROM generate_series(1, $2::int) AS g`,
        [id, inputs],
      );
      await fx.pool.query('UPDATE sessions SET next_seq = $2 WHERE id = $1', [id, inputs]);
    }
    await fx.pool.query('ANALYZE session_inputs');
  });

  afterAll(async () => {
    await fx.close();
  });

  it('counts every status of an inbox many pages long, as listing every input would, in one statement returning no input row', async () => {
    // The bulk inbox holds no `waiting` input (a parked one is written by `parkInput` only).
    const expected = Object.fromEntries(INPUT_STATUSES.map((status) => [status, status === 'waiting' ? 0 : 1_000]));
    let counts: unknown;
    const sent = await statementsSent(async () => {
      counts = await fx.store.countInputs(big);
    });
    expect(counts).toEqual(expected);
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0])).toContain('count(*)');
    const listed: Record<string, number> = Object.fromEntries(INPUT_STATUSES.map((status) => [status, 0]));
    for (let afterSeq = 0; afterSeq < 5_000; afterSeq += 1_000) {
      for (const input of await fx.store.listInputs(big, { afterSeq, limit: 1_000 })) {
        expect(input.status).toBe(statusOf(input.seq));
        listed[input.status]! += 1;
      }
    }
    expect(listed).toEqual(expected);
    expect(await fx.store.countInputs(small)).toEqual({ pending: 2, running: 2, waiting: 0, done: 2, failed: 2, cancelled: 2 });
  });

  it("is served by an index range of the session's rows: a small inbox beside a big one costs a few blocks", async () => {
    const result = await fx.pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${COUNT_INPUTS_SQL}`, [small]);
    const plan = flatten(result.rows[0]!['QUERY PLAN'][0].Plan);
    // Either index led by session_id will do (the planner may prefer the narrower unique one): both read only this session's rows.
    const sessionIndexes = ['session_inputs_session_id_seq_pk', 'session_inputs_input_id_uq'];
    expect(plan.some((node) => sessionIndexes.includes(node['Index Name'] ?? ''))).toBe(true);
    expect(plan.some((node) => node['Node Type'] === 'Seq Scan')).toBe(false);
    const root = plan[0]!;
    expect(root['Shared Hit Blocks'] + root['Shared Read Blocks']).toBeLessThanOrEqual(10);
  });
});

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
