/**
 * The shared contract of the `BudgetPort` (docs/budgets.md): the same scenarios against the Postgres
 * functions of migration 0010 and the in-memory fake, so the fake the loop's unit tests use cannot
 * drift. Budgets are created through the factory (the admin API is not part of the port); each
 * scenario uses a tenant of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BudgetPort } from '../../src/core/ports/budgets.js';
import type { SessionStore } from '../../src/core/ports/session-store.js';

export interface BudgetSpec {
  scope: 'session' | 'tenant' | 'agent';
  tenant: string;
  agent?: string;
  sessionId?: string;
  unit: 'tokens' | 'usd';
  period: 'total' | 'day' | 'month';
  limit: number;
}

export interface OpenedBudgets {
  store: SessionStore;
  budgets: BudgetPort;
  /** Creates a budget (or replaces its limit); its id. */
  setBudget(budget: BudgetSpec): Promise<number>;
  /** The budget's current window. */
  usage(budgetId: number): Promise<{ used: number; reserved: number }>;
  close(): Promise<void>;
}

export function budgetPortContract(name: string, factory: () => Promise<OpenedBudgets>): void {
  describe(name, () => {
    let opened: OpenedBudgets;
    let counter = 0;
    const ctx = () => opened;

    beforeAll(async () => {
      opened = await factory();
    });
    afterAll(async () => {
      await opened?.close();
    });

    /** A fresh session of a fresh tenant, holding a lease; its id, tenant and token. */
    async function leased(agent?: string): Promise<{ sessionId: string; tenant: string; token: number }> {
      counter += 1;
      const tenant = `bt${counter}-${Math.random().toString(36).slice(2, 8)}`;
      const sessionId = `${tenant}-s`;
      await ctx().store.createSession(agent === undefined ? { id: sessionId, tenant } : { id: sessionId, tenant, agent });
      const lease = await ctx().store.acquireLease({ sessionId, owner: 'contract', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('no lease');
      return { sessionId, tenant, token: lease.token };
    }

    it('no budget for the tenant: none, and nothing to settle', async () => {
      const s = await leased();
      expect(await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 100, picoUsd: 5 })).toEqual({ kind: 'none' });
    });

    it('reserves the worst case, settles to the actual, reports each threshold once', async () => {
      const s = await leased();
      const id = await ctx().setBudget({ scope: 'tenant', tenant: s.tenant, unit: 'tokens', period: 'total', limit: 1_000 });
      expect(await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 500, picoUsd: null })).toEqual({ kind: 'reserved' });
      expect(await ctx().usage(id)).toEqual({ used: 0, reserved: 500 });
      expect(await ctx().budgets.settle({ sessionId: s.sessionId, callKey: '1:0:model', tokens: 450, picoUsd: null })).toEqual([]);
      expect(await ctx().usage(id)).toEqual({ used: 450, reserved: 0 });
      await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:1:model', tokens: 500, picoUsd: null });
      const crossings = await ctx().budgets.settle({ sessionId: s.sessionId, callKey: '1:1:model', tokens: 400, picoUsd: null });
      expect(crossings).toEqual([{ budgetId: id, scope: 'tenant', unit: 'tokens', period: 'total', threshold: 0.8, limit: 1_000, used: 850 }]);
    });

    it('refuses when nothing is left, naming the budget; nothing is reserved anywhere', async () => {
      const s = await leased('default');
      const roomy = await ctx().setBudget({ scope: 'agent', tenant: s.tenant, agent: 'default', unit: 'tokens', period: 'day', limit: 1_000_000 });
      const tight = await ctx().setBudget({ scope: 'session', tenant: s.tenant, sessionId: s.sessionId, unit: 'tokens', period: 'total', limit: 100 });
      await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 300, picoUsd: null });
      await ctx().budgets.settle({ sessionId: s.sessionId, callKey: '1:0:model', tokens: 120, picoUsd: null });
      const refused = await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '2:0:model', tokens: 300, picoUsd: null });
      expect(refused).toMatchObject({ kind: 'refused', reason: 'limit', limit: 100, used: 120, reserved: 0, budget: { budgetId: tight, scope: 'session', sessionId: s.sessionId, unit: 'tokens', period: 'total', windowStart: '1970-01-01T00:00:00.000Z' } });
      expect(await ctx().usage(roomy)).toEqual({ used: 120, reserved: 0 });
    });

    it('a short reservation only when nothing else is reserved', async () => {
      const s = await leased();
      const other = `${s.tenant}-o`;
      await ctx().store.createSession({ id: other, tenant: s.tenant });
      const lease = await ctx().store.acquireLease({ sessionId: other, owner: 'contract', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('no lease');
      const id = await ctx().setBudget({ scope: 'tenant', tenant: s.tenant, unit: 'tokens', period: 'month', limit: 1_000 });
      await ctx().budgets.reserve({ sessionId: other, leaseToken: lease.token, callKey: '1:0:model', tokens: 600, picoUsd: null });
      expect(await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 600, picoUsd: null })).toMatchObject({ kind: 'refused', reason: 'limit', reserved: 600 });
      await ctx().budgets.settle({ sessionId: other, callKey: '1:0:model', tokens: 0, picoUsd: null });
      await ctx().budgets.settle({ sessionId: other, callKey: '1:0:model', tokens: 0, picoUsd: null });
      expect(await ctx().usage(id)).toEqual({ used: 0, reserved: 0 });
      await ctx().setBudget({ scope: 'tenant', tenant: s.tenant, unit: 'tokens', period: 'month', limit: 400 });
      expect(await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '2:0:model', tokens: 600, picoUsd: null })).toEqual({ kind: 'reserved' });
      expect(await ctx().usage(id)).toEqual({ used: 0, reserved: 400 });
    });

    it('a money budget refuses an unpriced model; a priced one counts picodollars', async () => {
      const s = await leased();
      const id = await ctx().setBudget({ scope: 'tenant', tenant: s.tenant, unit: 'usd', period: 'total', limit: 1_000_000 });
      expect(await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 10, picoUsd: null })).toMatchObject({ kind: 'refused', reason: 'unpriced_model' });
      expect(await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 10, picoUsd: 2_000 })).toEqual({ kind: 'reserved' });
      await ctx().budgets.settle({ sessionId: s.sessionId, callKey: '1:0:model', tokens: 10, picoUsd: 1_500 });
      expect(await ctx().usage(id)).toEqual({ used: 1_500, reserved: 0 });
    });

    it('a stale token reserves nothing (lease.lost); the next reserve gives back what the session held', async () => {
      const s = await leased();
      const id = await ctx().setBudget({ scope: 'tenant', tenant: s.tenant, unit: 'tokens', period: 'total', limit: 1_000 });
      await expect(ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token + 1_000_000, callKey: '1:0:model', tokens: 10, picoUsd: null })).rejects.toMatchObject({ code: 'lease.lost' });
      await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 300, picoUsd: null });
      await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 200, picoUsd: null });
      expect(await ctx().usage(id)).toEqual({ used: 0, reserved: 200 });
    });

    it('the sweeper gives back a released lease’s reservation; a late settle is still charged', async () => {
      const s = await leased();
      const id = await ctx().setBudget({ scope: 'tenant', tenant: s.tenant, unit: 'tokens', period: 'total', limit: 1_000 });
      await ctx().budgets.reserve({ sessionId: s.sessionId, leaseToken: s.token, callKey: '1:0:model', tokens: 300, picoUsd: null });
      await ctx().budgets.releaseStale(1_000);
      expect(await ctx().usage(id)).toEqual({ used: 0, reserved: 300 });
      await ctx().store.releaseLease({ sessionId: s.sessionId, token: s.token });
      expect(await ctx().budgets.releaseStale(1_000)).toBeGreaterThanOrEqual(1);
      expect(await ctx().usage(id)).toEqual({ used: 0, reserved: 0 });
      await ctx().budgets.settle({ sessionId: s.sessionId, callKey: '1:0:model', tokens: 250, picoUsd: null });
      expect(await ctx().usage(id)).toEqual({ used: 250, reserved: 0 });
    });
  });
}
