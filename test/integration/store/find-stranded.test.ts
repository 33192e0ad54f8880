import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findStrandedSessions } from '../../../src/store/upkeep/find-stranded-sessions.js';
import { FIND_STRANDED_SESSIONS_SQL } from '../../../src/store/upkeep/find-stranded-sessions-sql.js';
import { openStoreFixture, sessionId, type StoreFixture } from './store-fixture.js';

describe('the sweeper query', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('find_stranded');
  });

  afterAll(async () => {
    await fx.close();
  });

  it('with more stranded sessions than its limit, samples them: none is left out sweep after sweep', async () => {
    const ids = ['a', 'b', 'c'].map((label) => sessionId(`stranded-${label}`));
    for (const id of ids) await fx.store.createSession({ id });
    // Their holders died an hour ago, leases unreleased.
    await fx.pool.query(`UPDATE sessions SET lease_owner = 'dead', lease_token = nextval('lease_token_seq'), lease_expires_at = now() - interval '1 hour' WHERE id = ANY($1)`, [ids]);
    const seen = new Set<string>();
    // Sampling at random, one of three is missed 200 times in a row with a probability of 3 × (2/3)^200.
    for (let sweep = 0; sweep < 200 && seen.size < ids.length; sweep += 1) {
      const found = await findStrandedSessions(fx.pool, { graceMs: 1_000, limit: 1 });
      expect(found).toHaveLength(1);
      seen.add(found[0]!.sessionId);
    }
    expect([...seen].sort()).toEqual([...ids].sort());
  });
});

describe('the sweeper query and inputs waiting for child sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('find_stranded_waiting');
  });

  afterAll(async () => {
    await fx.close();
  });

  /**
   * A session whose input 1 waits for `call_a` (its child spawned) with input 2 pending behind it:
   * result delivered or not, lease released or live, its rows an hour old or fresh.
   */
  async function parked(label: string, options: { delivered: boolean; released?: boolean; aged?: boolean; cancelled?: boolean }): Promise<string> {
    const id = sessionId(label);
    await fx.store.createSession({ id });
    const lease = await fx.store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('expected the lease');
    for (const text of ['one', 'two']) await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { input: text }, maxBytes: 1_000 });
    await fx.store.claimNextInput({ sessionId: id, leaseToken: lease.token });
    const child = `${id}:sub:call_a`;
    await fx.store.spawnChild({
      parentSessionId: id,
      leaseToken: lease.token,
      inputSeq: 1,
      toolCallId: 'call_a',
      childSessionId: child,
      agent: 'default',
      task: 'work',
      wait: true,
      rootSessionId: id,
      depth: 1,
      maxChildrenPerInput: 5,
    });
    await fx.store.parkInput({ sessionId: id, leaseToken: lease.token, inputSeq: 1, awaiting: ['call_a'] });
    if (options.delivered) {
      await fx.store.deliverChildResult(child, {
        toolCallId: 'call_a',
        childSessionId: child,
        agent: 'default',
        status: 'completed',
        text: 'ok',
        errorCode: null,
        usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0, costUsd: 0, costPicoUsd: 0 },
        wait: true,
      });
    }
    if (options.cancelled === true) await fx.store.requestCancel(id);
    if (options.released !== false) await fx.store.releaseLease({ sessionId: id, token: lease.token, finishesPublished: true });
    if (options.aged !== false) {
      await fx.pool.query(
        `UPDATE session_inputs SET accepted_at = accepted_at - interval '1 hour', started_at = started_at - interval '1 hour' WHERE session_id = $1`,
        [id],
      );
      await fx.pool.query(`UPDATE sessions SET updated_at = now() - interval '1 hour' WHERE id = $1`, [id]);
    }
    return id;
  }

  it('wakes a session whose waiting input is ready and unleased for the grace period; leaves one that still waits', async () => {
    const ready = await parked('ready', { delivered: true });
    const cancelled = await parked('cancelled', { delivered: false, cancelled: true });
    const waits = await parked('waits', { delivered: false });
    const live = await parked('live', { delivered: true, released: false });
    const fresh = await parked('fresh', { delivered: true, aged: false });

    const found = new Set((await findStrandedSessions(fx.pool, { graceMs: 60_000, limit: 1_000 })).map((row) => row.sessionId));
    expect(found.has(ready)).toBe(true);
    expect(found.has(cancelled)).toBe(true);
    // Its pending input 2 waits behind input 1: no drain could start it, so no kick is due.
    expect(found.has(waits)).toBe(false);
    expect(found.has(live)).toBe(false);
    expect(found.has(fresh)).toBe(false);
    // The children are young: none is due either.
    expect([...found].filter((id) => id.includes(':sub:'))).toEqual([]);
  });

  it('reads the open inputs through session_inputs_open_idx, however many inputs ended', async () => {
    const id = sessionId('plan');
    await fx.store.createSession({ id });
    await fx.pool.query(
      `INSERT INTO session_inputs (session_id, seq, input_id, kind, payload, status)
       SELECT $1, g, 'old-' || g, 'send', '{}'::jsonb, 'done' FROM generate_series(1, 5000) AS g`,
      [id],
    );
    await fx.pool.query('ANALYZE session_inputs');
    const explained = await fx.pool.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${FIND_STRANDED_SESSIONS_SQL}`, [60_000, 100, 'a-queue']);
    const plan = flatten((explained.rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
    const inbox = plan.filter((node) => node['Relation Name'] === 'session_inputs');
    expect(inbox.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
    expect(inbox.some((node) => node['Index Name'] === 'session_inputs_open_idx')).toBe(true);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
