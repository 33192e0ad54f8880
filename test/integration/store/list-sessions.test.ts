import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveSessionList } from '../../../src/store/sessions/list-sessions-options.js';
import { listSessionsQuery } from '../../../src/store/sessions/list-sessions-sql.js';
import { openStoreFixture, sessionId, type StoreFixture } from './store-fixture.js';

/** What the contract cannot show: microsecond times, ties at one time across pages, the plans and the round trips. */
describe('listSessions on Postgres', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('list_sessions');
  });

  afterAll(async () => {
    await fx.close();
  });

  /** Sessions of `tenant` with the given creation times (ISO text with microseconds), in one statement. */
  async function insert(tenant: string, rows: Array<[id: string, createdAt: string]>): Promise<void> {
    await fx.pool.query(
      `INSERT INTO sessions (id, tenant, created_at, updated_at)
       SELECT r.id, $1, r.at::timestamptz, r.at::timestamptz FROM jsonb_to_recordset($2::jsonb) AS r(id text, at text)`,
      [tenant, JSON.stringify(rows.map(([id, at]) => ({ id, at })))],
    );
  }

  async function pageThrough(tenant: string, limit: number): Promise<{ ids: string[]; sizes: number[] }> {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages += 1) {
      const page = await fx.store.listSessions(cursor === undefined ? { tenant, limit } : { tenant, limit, cursor });
      ids.push(...page.sessions.map((s) => s.id));
      sizes.push(page.sessions.length);
      if (page.nextCursor === null) return { ids, sizes };
      cursor = page.nextCursor;
    }
    throw new Error('more pages than sessions');
  }

  it('pages exactly through sessions created in the same microsecond and a microsecond apart', async () => {
    const tenant = sessionId('ties');
    const base = sessionId('tie');
    // Three at one instant, two within the same millisecond a microsecond apart (a JavaScript date would merge them).
    await insert(tenant, [
      [`${base}-a`, '2026-01-01T00:00:00.000100Z'],
      [`${base}-b`, '2026-01-01T00:00:00.000100Z'],
      [`${base}-c`, '2026-01-01T00:00:00.000100Z'],
      [`${base}-d`, '2026-01-01T00:00:00.000101Z'],
      [`${base}-e`, '2026-01-01T00:00:00.000102Z'],
      [`${base}-f`, '2025-12-31T23:59:59.999999Z'],
    ]);
    const expected = [`${base}-e`, `${base}-d`, `${base}-c`, `${base}-b`, `${base}-a`, `${base}-f`];
    for (const limit of [1, 2, 4]) {
      const { ids } = await pageThrough(tenant, limit);
      expect(ids).toEqual(expected);
    }
    expect((await pageThrough(tenant, 2)).sizes).toEqual([2, 2, 2]);
  });

  it('keeps paging after the session a cursor ends at was deleted', async () => {
    const tenant = sessionId('gone');
    const base = sessionId('gone');
    await insert(tenant, [
      [`${base}-1`, '2026-02-01T00:00:01Z'],
      [`${base}-2`, '2026-02-01T00:00:02Z'],
      [`${base}-3`, '2026-02-01T00:00:03Z'],
    ]);
    const first = await fx.store.listSessions({ tenant, limit: 1 });
    expect(first.sessions.map((s) => s.id)).toEqual([`${base}-3`]);
    await fx.store.deleteSession(`${base}-3`);
    const rest = await fx.store.listSessions({ tenant, cursor: first.nextCursor! });
    expect(rest.sessions.map((s) => s.id)).toEqual([`${base}-2`, `${base}-1`]);
  });

  it('answers a page in one round trip', async () => {
    const tenant = sessionId('trips');
    await fx.store.createSession({ id: sessionId('trip'), tenant });
    const query = vi.spyOn(fx.pool, 'query');
    try {
      await fx.store.listSessions({ tenant, agent: 'default', status: 'idle', idPrefix: 'trip', limit: 5 });
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
  });

  it.each([
    ['all sessions', {}, 'sessions_created_idx'],
    ['a tenant', { tenant: 'acme' }, 'sessions_tenant_created_idx'],
    ['a tenant after a cursor', { tenant: 'acme', cursor: 'WyIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMDEwMFoiLCJ4Il0' }, 'sessions_tenant_created_idx'],
  ])('reads %s in index order, with no sort', async (_what, options, index) => {
    const client = await fx.pool.connect();
    try {
      await client.query('BEGIN');
      // The table is tiny: without these a sequential scan and a sort would win.
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_sort = off');
      const { text, values } = listSessionsQuery(resolveSessionList(options));
      const plan = (await client.query(`EXPLAIN ${text}`, values)).rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
      expect(plan).toContain(index);
      expect(plan).not.toMatch(/\bSort\b/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
