import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_HISTORY_PAGE_SQL, HISTORY_PAGE_SQL } from '../../../src/store/history/load-history-sql.js';
import { loadRunStateSql } from '../../../src/store/steps/load-run-state-sql.js';
import { LOAD_WINDOW_SQL } from '../../../src/store/steps/load-window-sql.js';
import { openStoreFixture, sessionId, type StoreFixture } from './store-fixture.js';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

describe('loadWindow', () => {
  let fx: StoreFixture;
  const big = sessionId('big');
  const small = sessionId('small');
  const long = sessionId('long');

  beforeAll(async () => {
    fx = await openStoreFixture('window');
    // Bulk history straight in SQL: 10,000 (big) or 10 (small) folded messages, then 10 active ones.
    for (const [id, compacted] of [
      [big, 10_000],
      [small, 10],
    ] as const) {
      await fx.store.createSession({ id });
      await fx.pool.query(
        `INSERT INTO messages (session_id, seq, role, content, state)
         SELECT $1, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
                to_jsonb('folded message ' || g), CASE WHEN g <= $2 THEN 'compacted' ELSE 'active' END
           FROM generate_series(1, $2::int + 10) AS g`,
        [id, compacted],
      );
      await fx.pool.query('UPDATE sessions SET next_message_seq = $2 WHERE id = $1', [id, compacted + 10]);
    }
    // 10,000 active messages: the whole history is the window.
    await fx.store.createSession({ id: long });
    await fx.pool.query(
      `INSERT INTO messages (session_id, seq, role, content)
       SELECT $1, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, to_jsonb('active message ' || g)
         FROM generate_series(1, 10000) AS g`,
      [long],
    );
    await fx.pool.query('UPDATE sessions SET next_message_seq = 10000 WHERE id = $1', [long]);
    await fx.pool.query('ANALYZE messages');
    await fx.pool.query('ANALYZE sessions');
  });

  afterAll(async () => {
    await fx.close();
  });

  async function explain(sql: string, id?: string | unknown[]): Promise<PlanNode[]> {
    const params = id === undefined ? [] : Array.isArray(id) ? id : [id];
    const result = await fx.pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
    const root = result.rows[0]?.['QUERY PLAN'][0].Plan;
    if (root === undefined) throw new Error('no plan');
    return flatten(root);
  }

  it('returns exactly the active messages, in seq order', async () => {
    const window = await fx.store.loadWindow(big);
    expect(window.map((m) => m.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 10_001 + i));
    expect(window.every((m) => m.state === 'active')).toBe(true);
    expect(window[0]?.message).toEqual({ role: 'user', content: 'folded message 10001' });
  });

  it('is served by messages_active_idx, filters out nothing, and costs the same with 10,000 folded rows as with 10', async () => {
    const bigPlan = await explain(LOAD_WINDOW_SQL, big);
    const smallPlan = await explain(LOAD_WINDOW_SQL, small);
    for (const plan of [bigPlan, smallPlan]) {
      expect(plan.some((node) => node['Index Name'] === 'messages_active_idx')).toBe(true);
      expect(plan.filter((node) => (node['Rows Removed by Filter'] ?? 0) > 0)).toEqual([]);
    }
    expect(blocks(bigPlan)).toBeLessThanOrEqual(blocks(smallPlan) + 3);
  });

  it('read for several run starts at once (batched), is served by the same index and does not walk the folded rows either', async () => {
    const windowOf = (ids: string[]) => loadRunStateSql(ids.map((id) => ({ sessionLiteral: `'${id}'`, inputSeq: 1, cached: null }))).split(';\n')[0]!;
    const both = await explain(windowOf([big, small]));
    const smallOnly = await explain(windowOf([small]));
    expect(both.some((node) => node['Index Name'] === 'messages_active_idx')).toBe(true);
    expect(both.filter((node) => node['Relation Name'] === 'messages' && (node['Rows Removed by Filter'] ?? 0) > 0)).toEqual([]);
    // The big session adds its 10 active rows' pages, not its 10,000 folded ones.
    expect(blocks(both)).toBeLessThanOrEqual(2 * blocks(smallOnly) + 3);
    const states = await Promise.all([big, small].map((id) => fx.store.loadRunState(id, 1)));
    expect(states.map((state) => state.window.map((m) => m.seq))).toEqual([
      Array.from({ length: 10 }, (_, i) => 10_001 + i),
      Array.from({ length: 10 }, (_, i) => 11 + i),
    ]);
  });

  it('read from a cached window, walks only the rows above its seq (the window cache, 10,000 active rows)', async () => {
    const epoch = (await fx.pool.query<{ e: number }>('SELECT window_epoch::int AS e FROM sessions WHERE id = $1', [long])).rows[0]!.e;
    const windowOf = (cached: { windowEpoch: number; throughSeq: number } | null) =>
      loadRunStateSql([{ sessionLiteral: `'${long}'`, inputSeq: 1, cached }]).split(';\n')[0]!;
    const tail = await explain(windowOf({ windowEpoch: epoch, throughSeq: 9_995 }));
    const whole = await explain(windowOf(null));
    const stale = await explain(windowOf({ windowEpoch: epoch + 1_000_000, throughSeq: 9_995 }));
    expect(tail.some((node) => node['Index Name'] === 'messages_active_idx')).toBe(true);
    // (The three-row sessions table is scanned; what matters is that no message row is read and dropped.)
    expect(tail.filter((node) => node['Relation Name'] === 'messages' && (node['Rows Removed by Filter'] ?? 0) > 0)).toEqual([]);
    const rows = (plan: PlanNode[]) => plan[0]!['Actual Rows'];
    expect([rows(tail), rows(whole), rows(stale)]).toEqual([5, 10_000, 10_000]);
    expect(blocks(tail)).toBeLessThanOrEqual(10);
    expect(blocks(whole)).toBeGreaterThan(10 * blocks(tail));
  });

  it('reads a history page (loopfleet history, SessionQueue.history) as an index range stopped by its limit', async () => {
    // 100 messages from the middle of 10,000 active ones: the partial index, and only the page's rows.
    const activePage = await explain(ACTIVE_HISTORY_PAGE_SQL, [long, 5_000, 100]);
    const activeWhole = await explain(ACTIVE_HISTORY_PAGE_SQL, [long, 0, null]);
    expect(activePage.some((node) => node['Index Name'] === 'messages_active_idx')).toBe(true);
    expect(activePage.filter((node) => node['Relation Name'] === 'messages' && (node['Rows Removed by Filter'] ?? 0) > 0)).toEqual([]);
    expect([activePage[0]!['Actual Rows'], activeWhole[0]!['Actual Rows']]).toEqual([100, 10_000]);
    expect(blocks(activeWhole)).toBeGreaterThan(10 * blocks(activePage));
    // With the folded rows: 100 of the 10,010 rows of `big`, from the middle, by the primary key (session_id, seq).
    const fullPage = await explain(HISTORY_PAGE_SQL, [big, 5_000, 100]);
    const fullWhole = await explain(HISTORY_PAGE_SQL, [big, 0, null]);
    expect(fullPage.some((node) => node['Index Name'] === 'messages_session_id_seq_pk')).toBe(true);
    expect([fullPage[0]!['Actual Rows'], fullWhole[0]!['Actual Rows']]).toEqual([100, 10_010]);
    expect(blocks(fullWhole)).toBeGreaterThan(10 * blocks(fullPage));
    const page = await fx.store.loadHistory(big, { includeCompacted: true, afterSeq: 5_000, limit: 100 });
    expect(page.map((m) => m.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 5_001 + i));
    // Unpaged, the active history is still the whole window, as loadWindow reads it.
    expect(await fx.store.loadHistory(big)).toEqual(await fx.store.loadWindow(big));
  });

  it('would notice a plan that walks the folded rows (control for the measurement above)', async () => {
    // Same query, but the predicate no longer matches the partial index's, so it cannot be used.
    const unindexed = LOAD_WINDOW_SQL.replace("state = 'active'", "state || '' = 'active'");
    expect(unindexed).not.toBe(LOAD_WINDOW_SQL);
    const bigPlan = await explain(unindexed, big);
    const smallPlan = await explain(unindexed, small);
    expect(blocks(bigPlan)).toBeGreaterThan(blocks(smallPlan) + 3);
  });
});

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}

/** Shared buffers the whole plan touched (the root node's counts include its children's). */
function blocks(plan: PlanNode[]): number {
  const root = plan[0];
  return root === undefined ? 0 : root['Shared Hit Blocks'] + root['Shared Read Blocks'];
}
