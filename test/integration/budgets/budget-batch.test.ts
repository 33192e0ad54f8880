/**
 * Budget reserves and settles in batches (migration 0013, docs/budgets.md "What it costs"): many
 * sessions' calls in one statement are decided in session id order against running totals, a
 * refusal or a stale lease touches only its own call, thresholds are crossed once however settles
 * are batched, and batches running beside the sweeper never deadlock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BudgetCrossing, BudgetReserveRequest } from '../../../src/core/ports/budgets.js';
import { PostgresBudgetPort } from '../../../src/store/budgets/postgres-budget-port.js';
import { reserveBudgets } from '../../../src/store/budgets/reserve-budget.js';
import { settleBudgets } from '../../../src/store/budgets/settle-budget.js';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import type pg from 'pg';

describe('budget batches', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let other: pg.Pool;
  let store: PostgresSessionStore;

  beforeAll(async () => {
    db = await createTestDatabase('budget_batch');
    pool = createPgPool(db.url, { applicationName: 'loopfleet-test-budget-batch', maxConnections: 6 });
    other = createPgPool(db.url, { applicationName: 'loopfleet-test-budget-batch-2', maxConnections: 6 });
    store = new PostgresSessionStore(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await other?.end();
    await db?.drop();
  });

  /** `count` leased sessions of `tenant`, ids `<tenant>-00`…; their lease tokens by id. */
  async function leased(tenant: string, count: number): Promise<Map<string, number>> {
    const tokens = new Map<string, number>();
    for (let index = 0; index < count; index += 1) {
      const sessionId = `${tenant}-${String(index).padStart(2, '0')}`;
      await store.createSession({ id: sessionId, tenant });
      tokens.set(sessionId, await lease(sessionId));
    }
    return tokens;
  }

  async function lease(sessionId: string): Promise<number> {
    const acquired = await store.acquireLease({ sessionId, owner: 'budget-batch', ttlMs: 60_000 });
    if (!acquired.acquired) throw new Error(`no lease on ${sessionId}`);
    return acquired.token;
  }

  async function budget(scope: 'tenant' | 'session', tenant: string, unit: 'tokens' | 'usd', limit: number, sessionId = ''): Promise<number> {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO budgets (scope, tenant, session_id, unit, period, limit_amount) VALUES ($1, $2, $3, $4, 'total', $5) RETURNING id::text`,
      [scope, tenant, sessionId, unit, limit],
    );
    return Number(rows[0]!.id);
  }

  async function usage(id: number): Promise<{ used: number; reserved: number }> {
    const { rows } = await pool.query<{ used: string; reserved: string }>(`SELECT used::text, reserved::text FROM budget_usage WHERE budget_id = $1`, [id]);
    return { used: Number(rows[0]?.used ?? 0), reserved: Number(rows[0]?.reserved ?? 0) };
  }

  /** What the budget's reservation rows hold: their count and their sum. */
  async function held(id: number): Promise<{ rows: number; amount: number }> {
    const { rows } = await pool.query<{ n: number; amount: string }>(`SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS amount FROM budget_reservations WHERE budget_id = $1`, [id]);
    return { rows: rows[0]!.n, amount: Number(rows[0]!.amount) };
  }

  function call(tokens: Map<string, number>, sessionId: string, amount: number, callKey = '1:0:model'): BudgetReserveRequest {
    return { sessionId, leaseToken: tokens.get(sessionId)!, callKey, tokens: amount, picoUsd: null };
  }

  it('decides many sessions in one statement in session id order, against running totals', async () => {
    const tokens = await leased('bb-order', 10);
    const id = await budget('tenant', 'bb-order', 'tokens', 1_000);
    const ids = [...tokens.keys()];
    // Sent in reverse: the order of decision is the sessions' ids, not the batch's.
    const outcomes = await reserveBudgets(pool, [...ids].reverse().map((sessionId) => call(tokens, sessionId, 300)));
    const byId = new Map([...ids].reverse().map((sessionId, index) => [sessionId, outcomes[index]]));
    expect(ids.slice(0, 3).map((sessionId) => byId.get(sessionId))).toEqual([{ kind: 'reserved' }, { kind: 'reserved' }, { kind: 'reserved' }]);
    for (const sessionId of ids.slice(3)) expect(byId.get(sessionId)).toMatchObject({ kind: 'refused', reason: 'limit', limit: 1_000, used: 0, reserved: 900 });
    expect(await usage(id)).toEqual({ used: 0, reserved: 900 });
    expect(await held(id)).toEqual({ rows: 3, amount: 900 });

    const crossings = await settleBudgets(pool, ids.slice(0, 3).map((sessionId) => ({ sessionId, callKey: '1:0:model', tokens: 300, picoUsd: null })));
    // 300, 600, 900 in session id order: the third crosses 80 %, and only it.
    expect(crossings).toEqual([[], [], [{ budgetId: id, scope: 'tenant', unit: 'tokens', period: 'total', threshold: 0.8, limit: 1_000, used: 900 }]]);
    expect(await usage(id)).toEqual({ used: 900, reserved: 0 });
  });

  it('grants a short reservation in a batch only to the first call, when nothing else is reserved', async () => {
    const tokens = await leased('bb-short', 3);
    const id = await budget('tenant', 'bb-short', 'tokens', 200);
    const outcomes = await reserveBudgets(pool, [...tokens.keys()].map((sessionId) => call(tokens, sessionId, 300)));
    expect(outcomes[0]).toEqual({ kind: 'reserved' });
    expect(outcomes.slice(1)).toMatchObject([
      { kind: 'refused', reserved: 200 },
      { kind: 'refused', reserved: 200 },
    ]);
    expect(await usage(id)).toEqual({ used: 0, reserved: 200 });
    // The refused calls' rows are gone, the short one's holds what it was granted.
    expect(await held(id)).toEqual({ rows: 1, amount: 200 });
  });

  it('a refusal and a stale lease in a batch touch only their own calls', async () => {
    const tokens = await leased('bb-mixed', 4);
    const [stale, tight, first, second] = [...tokens.keys()] as [string, string, string, string];
    const tenantBudget = await budget('tenant', 'bb-mixed', 'tokens', 10_000);
    const tightBudget = await budget('session', 'bb-mixed', 'tokens', 0, tight);
    const requests = [stale, tight, first, second].map((sessionId) => call(tokens, sessionId, 100));
    requests[0] = Object.assign({}, requests[0]!, { leaseToken: tokens.get(stale)! + 1_000 });
    const outcomes = await reserveBudgets(pool, requests);
    expect(outcomes[0]).toMatchObject({ code: 'lease.lost' });
    expect(outcomes[1]).toMatchObject({ kind: 'refused', reason: 'limit', budget: { budgetId: tightBudget, scope: 'session', sessionId: tight } });
    expect(outcomes.slice(2)).toEqual([{ kind: 'reserved' }, { kind: 'reserved' }]);
    expect(await usage(tenantBudget)).toEqual({ used: 0, reserved: 200 });
    expect(await usage(tightBudget)).toEqual({ used: 0, reserved: 0 });
    expect(await held(tenantBudget)).toEqual({ rows: 2, amount: 200 });
    expect(await held(tightBudget)).toEqual({ rows: 0, amount: 0 });

    // The same through the port, all at once: one batch, and each call gets its own outcome.
    const port = new PostgresBudgetPort(pool);
    const settled = await Promise.allSettled(requests.map((request) => port.reserve(Object.assign({}, request, { callKey: '2:0:model' }))));
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: { code: 'lease.lost' } });
    expect(settled.slice(1).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.kind : 'rejected'))).toEqual(['refused', 'reserved', 'reserved']);
    // The second reserve of each session gave back its first: still two calls' worth.
    expect(await usage(tenantBudget)).toEqual({ used: 0, reserved: 200 });
  });

  it('each threshold is crossed by exactly one settle, with calls batched on two processes at once', async () => {
    const tokens = await leased('bb-warn', 40);
    const limit = 8_000;
    const id = await budget('tenant', 'bb-warn', 'tokens', limit);
    const ports = [new PostgresBudgetPort(pool, { maxSize: 16, maxInFlight: 2 }), new PostgresBudgetPort(other, { maxSize: 16, maxInFlight: 2 })];
    const crossings: BudgetCrossing[] = [];
    // Each session calls until it is refused; the last one standing takes the budget to its cap.
    await Promise.all(
      [...tokens.keys()].map(async (sessionId, index) => {
        const port = ports[index % 2]!;
        for (let round = 0; ; round += 1) {
          const callKey = `1:${round}:model`;
          const reservation = await port.reserve(call(tokens, sessionId, 250, callKey));
          if (reservation.kind !== 'reserved') return;
          crossings.push(...(await port.settle({ sessionId, callKey, tokens: 250, picoUsd: null })));
        }
      }),
    );
    const final = await usage(id);
    expect(final.reserved).toBe(0);
    expect(final.used).toBeGreaterThanOrEqual(limit);
    expect(final.used).toBeLessThanOrEqual(limit + 250);
    expect(crossings.map((crossing) => crossing.threshold).sort()).toEqual([0.8, 1]);
  });

  it('batches beside a sweep loop never deadlock, and the books balance', async () => {
    const tokens = await leased('bb-sweep', 24);
    const ids = [...tokens.keys()];
    const budgets = [await budget('tenant', 'bb-sweep', 'tokens', 1_000_000_000), await budget('tenant', 'bb-sweep', 'usd', 1_000_000_000_000)];
    for (const sessionId of ids) budgets.push(await budget('session', 'bb-sweep', 'tokens', 1_000_000_000, sessionId));
    const ports = [new PostgresBudgetPort(pool, { maxSize: 8, maxInFlight: 2 }), new PostgresBudgetPort(other, { maxSize: 8, maxInFlight: 2 })];
    let running = true;
    // The sweeper on a connection of its own, as long as the calls run: it takes reservation rows, then usage rows.
    const sweeper = new PostgresBudgetPort(other);
    const sweeping = (async () => {
      while (running) await sweeper.releaseStale(5);
    })();
    try {
      await Promise.all(
        ids.map(async (sessionId, index) => {
          const port = ports[index % 2]!;
          for (let round = 0; round < 12; round += 1) {
            const callKey = `${round}:0:model`;
            await port.reserve({ sessionId, leaseToken: tokens.get(sessionId)!, callKey, tokens: 100, picoUsd: 1_000 });
            if (round % 2 === 1) {
              await port.settle({ sessionId, callKey, tokens: 50, picoUsd: 500 });
              continue;
            }
            // A holder that goes away mid-call: its reservation is stale for the sweeper and for the next reserve alike.
            await store.releaseLease({ sessionId, token: tokens.get(sessionId)! });
            tokens.set(sessionId, await lease(sessionId));
          }
        }),
      );
    } finally {
      running = false;
      await sweeping;
    }
    // What every usage row holds reserved is what its reservation rows add up to.
    const { rows } = await pool.query<{ budget_id: string; reserved: string; held: string }>(
      `SELECT u.budget_id::text, u.reserved::text, coalesce((SELECT sum(r.amount) FROM budget_reservations r WHERE r.budget_id = u.budget_id), 0)::text AS held
         FROM budget_usage u WHERE u.budget_id = ANY ($1::bigint[])`,
      [budgets],
    );
    expect(rows).toHaveLength(budgets.length);
    for (const row of rows) expect(row.reserved, `budget ${row.budget_id}`).toBe(row.held);
    // Every settled call charged: 6 settles of 50 tokens per session.
    expect(await usage(budgets[0]!)).toMatchObject({ used: ids.length * 6 * 50 });
  });
});
