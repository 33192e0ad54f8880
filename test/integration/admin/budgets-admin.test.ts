import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminFixture } from './admin-fixture.js';

/** Budgets through the queue, the gateway and the CLI, on Postgres (the contract covers the store). */
describe('budgets admin', () => {
  let fx: AdminFixture;

  beforeAll(async () => {
    fx = await AdminFixture.create('budgets_admin');
  });

  afterAll(async () => {
    await fx?.close();
  });

  it('converts a USD limit to picodollars exactly and shows the window in USD', async () => {
    const budget = await fx.queue.budgets.set({ scope: 'tenant', tenant: 'usd-a', unit: 'usd', period: 'month', limit: 0.01 });
    expect(budget).toMatchObject({ unit: 'usd', limit: 0.01, used: 0, reserved: 0, remaining: 0.01, agent: null, sessionId: null, exact: { limit: '10000000000', used: '0' } });
    const text = await fx.queue.budgets.set({ scope: 'tenant', tenant: 'usd-a', unit: 'usd', period: 'month', limit: '1234567.123456789012' });
    expect(text).toMatchObject({ id: budget.id, exact: { limit: '1234567123456789012' } });
    const { rows } = await fx.pool.query(`SELECT limit_amount::text AS "limit" FROM budgets WHERE id = $1`, [budget.id]);
    expect(rows[0]).toEqual({ limit: '1234567123456789012' });
  });

  it.each([
    ['13 decimals', { unit: 'usd', limit: '0.0000000000001' }],
    ['a negative amount', { unit: 'usd', limit: -1 }],
    ['past the bigint range', { unit: 'usd', limit: '9300000' }],
    ['a fraction of a token', { unit: 'tokens', limit: 1.5 }],
    ['not a number', { unit: 'tokens', limit: 'lots' }],
  ])('refuses a limit with %s as input.invalid', async (_what, change) => {
    const params = Object.assign({ scope: 'tenant', tenant: 'bad-limit', period: 'day' }, change) as Parameters<typeof fx.queue.budgets.set>[0];
    await expect(fx.queue.budgets.set(params)).rejects.toMatchObject({ code: 'input.invalid', details: { field: 'limit' } });
    expect(await fx.queue.budgets.list({ tenant: 'bad-limit' })).toEqual([]);
  });

  it("reads the current window's use, and a day budget starts afresh when the day rolls", async () => {
    await fx.setClock('2026-03-10T23:59:00Z');
    try {
      const day = await fx.queue.budgets.set({ scope: 'tenant', tenant: 'window-t', unit: 'tokens', period: 'day', limit: 1000 });
      expect(day.windowStart.toISOString()).toBe('2026-03-10T00:00:00.000Z');
      await fx.pool.query(`INSERT INTO budget_usage (budget_id, window_start, used, reserved) VALUES ($1, '2026-03-10T00:00:00Z', 700, 200), ($1, '2026-03-09T00:00:00Z', 999, 0)`, [day.id]);
      expect(await fx.queue.budgets.get(day.id)).toMatchObject({ used: 700, reserved: 200, remaining: 100 });
      await fx.setClock('2026-03-11T00:00:01Z');
      expect(await fx.queue.budgets.get(day.id)).toMatchObject({ windowStart: new Date('2026-03-11T00:00:00Z'), used: 0, reserved: 0, remaining: 1000 });
      const month = await fx.queue.budgets.set({ scope: 'agent', tenant: 'window-t', agent: 'writer', unit: 'usd', period: 'month', limit: 1 });
      expect(month.windowStart.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    } finally {
      await fx.setClock(null);
    }
  });

  it('deletes a budget with its use and reservations', async () => {
    await fx.queue.sessions.create({ id: 'del-s', tenant: 'del-t' });
    const budget = await fx.queue.budgets.set({ scope: 'session', sessionId: 'del-s', unit: 'tokens', period: 'total', limit: 10 });
    expect(budget).toMatchObject({ tenant: 'del-t', sessionId: 'del-s' });
    await fx.pool.query(`INSERT INTO budget_usage (budget_id, window_start, used, reserved) VALUES ($1, 'epoch', 5, 3)`, [budget.id]);
    await fx.pool.query(`INSERT INTO budget_reservations (session_id, call_key, budget_id, window_start, amount, lease_token) VALUES ('del-s', '1:1', $1, 'epoch', 3, 1)`, [budget.id]);
    expect(await fx.queue.budgets.delete(budget.id)).toBe(true);
    const { rows } = await fx.pool.query(`SELECT (SELECT count(*) FROM budget_usage WHERE budget_id = $1)::int AS usage, (SELECT count(*) FROM budget_reservations WHERE budget_id = $1)::int AS held`, [budget.id]);
    expect(rows[0]).toEqual({ usage: 0, held: 0 });
  });

  describe('gateway', () => {
    it('needs admin scope', async () => {
      const writer = await fx.headers({ tenant: 'gw-a', scope: 'write' });
      const response = await fx.app.inject({ method: 'GET', url: '/v1/budgets', headers: writer });
      expect(response.statusCode).toBe(403);
      expect(response.json().error.code).toBe('auth.forbidden');
    });

    it("lets a tenant's admin set and see its own budgets only", async () => {
      const acme = await fx.headers({ tenant: 'gw-acme', scope: 'admin' });
      const root = await fx.headers({ scope: 'admin' });
      const set = await fx.app.inject({ method: 'PUT', url: '/v1/budgets', headers: acme, payload: { scope: 'tenant', unit: 'usd', period: 'day', limit: '0.5' } });
      expect(set.statusCode).toBe(200);
      expect(set.json()).toMatchObject({ tenant: 'gw-acme', limit: 0.5, exact: { limit: '500000000000' } });
      const other = await fx.app.inject({ method: 'PUT', url: '/v1/budgets', headers: acme, payload: { scope: 'tenant', tenant: 'gw-globex', unit: 'usd', period: 'day', limit: 1 } });
      expect(other.statusCode).toBe(403);
      const globex = await fx.app.inject({ method: 'PUT', url: '/v1/budgets', headers: root, payload: { scope: 'agent', tenant: 'gw-globex', agent: 'writer', unit: 'tokens', period: 'total', limit: 100 } });
      expect(globex.statusCode).toBe(200);
      const globexId = globex.json().id as number;
      expect((await fx.app.inject({ url: `/v1/budgets/${globexId}`, headers: acme })).statusCode).toBe(404);
      expect((await fx.app.inject({ method: 'DELETE', url: `/v1/budgets/${globexId}`, headers: acme })).json().error.code).toBe('budget.not_found');
      const listed = await fx.app.inject({ url: '/v1/budgets', headers: acme });
      expect(listed.json().budgets.map((b: { tenant: string }) => b.tenant)).toEqual(['gw-acme']);
      expect((await fx.app.inject({ url: '/v1/budgets?tenant=gw-globex', headers: acme })).statusCode).toBe(403);
      expect((await fx.app.inject({ url: '/v1/budgets?tenant=gw-globex', headers: root })).json().budgets).toHaveLength(1);
      const bad = await fx.app.inject({ method: 'PUT', url: '/v1/budgets', headers: acme, payload: { scope: 'tenant', unit: 'usd', period: 'day', limit: '0.0000000000001' } });
      expect(bad.statusCode).toBe(400);
      expect((await fx.app.inject({ method: 'DELETE', url: `/v1/budgets/${set.json().id as number}`, headers: acme })).statusCode).toBe(204);
    });

    it("answers session.not_found for a session budget on another tenant's session", async () => {
      await fx.queue.sessions.create({ id: 'gw-theirs', tenant: 'gw-them' });
      const acme = await fx.headers({ tenant: 'gw-acme', scope: 'admin' });
      const response = await fx.app.inject({ method: 'PUT', url: '/v1/budgets', headers: acme, payload: { scope: 'session', sessionId: 'gw-theirs', unit: 'tokens', period: 'total', limit: 5 } });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('session.not_found');
    });
  });

  describe('CLI', () => {
    it('sets, gets, lists and deletes; prints USD exactly', async () => {
      const set = await fx.cli('budget', 'set', '--scope', 'tenant', '--tenant', 'cli-t', '--unit', 'usd', '--period', 'month', '--limit', '0.000000012345', '--json');
      expect(set.code).toBe(0);
      const budget = JSON.parse(set.out) as { id: number; exact: { limit: string } };
      expect(budget.exact.limit).toBe('12345');
      const got = await fx.cli('budget', 'get', String(budget.id));
      expect(got.code).toBe(0);
      expect(got.out).toContain('$0.000000012345');
      expect(got.out.split('\n')[0]).toMatch(/^ID\s+SCOPE\s+TENANT/);
      const listed = await fx.cli('budget', 'list', '--tenant', 'cli-t', '--json');
      expect(listed.out.trim().split('\n').map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([budget.id]);
      expect(await fx.cli('budget', 'delete', String(budget.id))).toMatchObject({ code: 0, out: `deleted budget ${budget.id}\n` });
      expect((await fx.cli('budget', 'delete', String(budget.id))).code).toBe(3);
    });

    it('refuses a bad command line with exit 2 and a bad value with exit 1', async () => {
      expect((await fx.cli('budget', 'raise')).code).toBe(2);
      expect((await fx.cli('budget', 'set', '--scope', 'tenant')).code).toBe(2);
      expect((await fx.cli('budget', 'get', 'x')).code).toBe(2);
      const bad = await fx.cli('budget', 'set', '--scope', 'tenant', '--tenant', 'cli-t', '--unit', 'usd', '--period', 'week', '--limit', '1');
      expect(bad).toMatchObject({ code: 1 });
      expect(bad.err).toContain('[input.invalid]');
    });
  });
});
