import { describe, expect, it } from 'vitest';
import type { BudgetWrite } from '../../../../src/core/ports/tenant-admin.js';
import { expectCode, type ContractContext } from '../../contract-helpers.js';

const DAY_MS = 86_400_000;

function tenantBudget(tenant: string, overrides: Partial<BudgetWrite> = {}): BudgetWrite {
  return Object.assign({ scope: 'tenant' as const, tenant, agent: '', sessionId: '', unit: 'usd' as const, period: 'month' as const, limitAmount: '10000000000' }, overrides);
}

/** Budgets as an operator sets, reads, lists and deletes them (enforcement is another port's). */
export function budgetAdminScenarios(ctx: ContractContext): void {
  describe('budget admin', () => {
    it('creates a budget, and replaces its limit when the same key is set again', async () => {
      const tenant = ctx.id('budget-acme');
      const first = await ctx.store.setBudget(tenantBudget(tenant));
      expect(first).toMatchObject({ scope: 'tenant', tenant, agent: '', sessionId: '', unit: 'usd', period: 'month', limitAmount: '10000000000', usedAmount: '0', reservedAmount: '0' });
      const again = await ctx.store.setBudget(tenantBudget(tenant, { limitAmount: '9223372036854775807' }));
      expect(again).toMatchObject({ id: first.id, limitAmount: '9223372036854775807' });
      expect(await ctx.store.getBudget(first.id)).toMatchObject({ id: first.id, limitAmount: '9223372036854775807' });
      // Another unit or period is another budget.
      const tokens = await ctx.store.setBudget(tenantBudget(tenant, { unit: 'tokens', period: 'total', limitAmount: '0' }));
      expect(tokens.id).not.toBe(first.id);
      expect(tokens.windowStart.getTime()).toBe(0);
    });

    it("answers the current window's start: the UTC day or month", async () => {
      const tenant = ctx.id('budget-window');
      const now = ctx.now();
      const day = await ctx.store.setBudget(tenantBudget(tenant, { period: 'day' }));
      expect(day.windowStart.getTime() % DAY_MS).toBe(0);
      expect(now - day.windowStart.getTime()).toBeGreaterThanOrEqual(-60_000);
      expect(now - day.windowStart.getTime()).toBeLessThan(DAY_MS + 60_000);
      const month = await ctx.store.setBudget(tenantBudget(tenant, { period: 'month' }));
      expect(month.windowStart.getUTCDate()).toBe(1);
      expect(month.windowStart.getTime() % DAY_MS).toBe(0);
    });

    it("gives a session budget its session's tenant; a missing session or another tenant is session.not_found", async () => {
      const [id, tenant, missing] = [ctx.id('budget-session'), ctx.id('budget-globex'), ctx.id('budget-missing')];
      await ctx.store.createSession({ id, tenant });
      const write: BudgetWrite = { scope: 'session', tenant: null, agent: '', sessionId: id, unit: 'tokens', period: 'total', limitAmount: '5000' };
      expect(await ctx.store.setBudget(write)).toMatchObject({ scope: 'session', tenant, sessionId: id, limitAmount: '5000' });
      expect(await ctx.store.setBudget(Object.assign({}, write, { tenant, limitAmount: '6000' }))).toMatchObject({ tenant, limitAmount: '6000' });
      await expectCode(ctx.store.setBudget(Object.assign({}, write, { tenant: ctx.id('other') })), 'session.not_found');
      await expectCode(ctx.store.setBudget(Object.assign({}, write, { sessionId: missing })), 'session.not_found');
      expect(await ctx.store.listBudgets({ sessionId: missing })).toEqual([]);
      expect((await ctx.store.listBudgets({ sessionId: id })).map((b) => b.limitAmount)).toEqual(['6000']);
    });

    it("deletes a session's budgets with the session, and none of another scope", async () => {
      const [id, tenant] = [ctx.id('budget-gone'), ctx.id('budget-gone-t')];
      await ctx.store.createSession({ id, tenant });
      await ctx.store.setBudget({ scope: 'session', tenant: null, agent: '', sessionId: id, unit: 'tokens', period: 'total', limitAmount: '5' });
      const kept = await ctx.store.setBudget(tenantBudget(tenant));
      await ctx.store.deleteSession(id);
      expect(await ctx.store.listBudgets({ sessionId: id })).toEqual([]);
      expect((await ctx.store.listBudgets({ tenant })).map((b) => b.id)).toEqual([kept.id]);
    });

    it.each([
      ['an unknown scope', { scope: 'world' }],
      ['an unknown unit', { unit: 'eur' }],
      ['an unknown period', { period: 'week' }],
      ['a negative limit', { limitAmount: '-1' }],
      ['a fractional limit', { limitAmount: '1.5' }],
      ['a limit past bigint', { limitAmount: '9223372036854775808' }],
      ['a limit as a number', { limitAmount: 5 }],
      ['a tenant budget naming a session', { sessionId: 'abc' }],
      ['a tenant budget naming an agent', { agent: 'helper' }],
      ['an agent budget without an agent', { scope: 'agent' }],
      ['a bad tenant', { tenant: 'a b' }],
      ['no tenant', { tenant: null }],
      ['an unknown field', { extra: 1 }],
    ])('refuses %s with input.invalid, writing nothing', async (_what, change) => {
      const tenant = ctx.id('budget-bad');
      await expectCode(ctx.store.setBudget(Object.assign(tenantBudget(tenant), change) as BudgetWrite), 'input.invalid');
      expect(await ctx.store.listBudgets({ tenant })).toEqual([]);
    });

    it('lists by tenant, scope, agent and session, a page by id; deletes one', async () => {
      const tenant = ctx.id('budget-list');
      const a = await ctx.store.setBudget(tenantBudget(tenant));
      const b = await ctx.store.setBudget(tenantBudget(tenant, { scope: 'agent', agent: 'writer' }));
      const c = await ctx.store.setBudget(tenantBudget(tenant, { scope: 'agent', agent: 'reader', unit: 'tokens' }));
      expect((await ctx.store.listBudgets({ tenant })).map((x) => x.id)).toEqual([a.id, b.id, c.id]);
      expect((await ctx.store.listBudgets({ tenant, scope: 'agent' })).map((x) => x.id)).toEqual([b.id, c.id]);
      expect((await ctx.store.listBudgets({ tenant, agent: 'reader' })).map((x) => x.id)).toEqual([c.id]);
      expect((await ctx.store.listBudgets({ tenant, limit: 1, afterId: a.id })).map((x) => x.id)).toEqual([b.id]);
      await expectCode(ctx.store.listBudgets({ tenant, limit: 0 }), 'input.invalid');
      await expectCode(ctx.store.listBudgets({ scope: 'galaxy' as 'tenant' }), 'input.invalid');
      expect(await ctx.store.deleteBudget(b.id)).toBe(true);
      expect(await ctx.store.deleteBudget(b.id)).toBe(false);
      expect(await ctx.store.getBudget(b.id)).toBeNull();
      expect((await ctx.store.listBudgets({ tenant })).map((x) => x.id)).toEqual([a.id, c.id]);
      await expectCode(ctx.store.getBudget(0), 'input.invalid');
    });
  });
}
