import { describe, expect, it } from 'vitest';
import type { UsageQuery, UsageReportRows } from '../../../../src/core/ports/tenant-admin.js';
import type { UsageRoundRecord } from '../../../../src/core/session-types.js';
import { expectCode, leased, usageRound, type ContractContext } from '../../contract-helpers.js';

const NUMERIC = ['llmCalls', 'promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens'] as const;

/** The sums of some usage rows, as a report row carries them. */
function sumOf(rows: readonly UsageRoundRecord[]): Record<string, number> {
  return Object.fromEntries(NUMERIC.map((field) => [field, rows.reduce((sum, row) => sum + row[field], 0)]));
}

/** Usage reports over what the commits recorded; the tenant and cost columns are the Postgres tests' (they need the commit to write them). */
export function usageReportScenarios(ctx: ContractContext): void {
  describe('usage report', () => {
    const window = (): Pick<UsageQuery, 'from' | 'to'> => ({ from: ctx.now() - 3_600_000, to: ctx.now() + 3_600_000 });

    it("sums each session's rounds as its own rows do, and the totals over every group", async () => {
      const a = await leased(ctx, 'usage-report-a');
      const b = await leased(ctx, 'usage-report-b');
      await ctx.store.commitStep({ sessionId: a.id, leaseToken: a.token, usageRounds: [usageRound(1, 0, 100), usageRound(1, 1, 50), usageRound(2, 0, 7)] });
      await ctx.store.commitStep({ sessionId: b.id, leaseToken: b.token, usageRounds: [Object.assign(usageRound(1, 0, 40), { llmCalls: 3, cachedTokens: 10, reasoningTokens: 2 })] });
      const report = await ctx.store.usageReport(Object.assign({ groupBy: 'session' as const, limit: 10_000 }, window()));
      for (const session of [a, b]) {
        const row = report.rows.find((r) => r.key === session.id);
        const own = await ctx.store.getUsageRounds(session.id);
        expect(row).toMatchObject(sumOf(own));
        expect(row?.inputs).toBe(new Set(own.map((r) => r.inputSeq)).size);
      }
      expect(report.rows.find((r) => r.key === a.id)).toMatchObject({ llmCalls: 3, inputs: 2, promptTokens: 157 });
      expectTotalsSumRows(report);
    });

    it('groups by model and agent, and cuts at the limit with the totals still over all', async () => {
      const s = await leased(ctx, 'usage-report-model');
      await ctx.store.commitStep({ sessionId: s.id, leaseToken: s.token, usageRounds: [usageRound(1, 0, 10), Object.assign(usageRound(1, 1, 20), { provider: 'anthropic', model: 'claude-test' })] });
      const byModel = await ctx.store.usageReport(Object.assign({ groupBy: 'model' as const }, window()));
      expect(byModel.rows.map((r) => r.key)).toEqual(expect.arrayContaining(['anthropic:claude-test', 'openai:gpt-test']));
      expect([...byModel.rows.map((r) => r.key)].sort()).toEqual(byModel.rows.map((r) => r.key));
      const byAgent = await ctx.store.usageReport(Object.assign({ groupBy: 'agent' as const }, window()));
      expect(byAgent.rows.map((r) => r.key)).toContain('default');
      const cut = await ctx.store.usageReport(Object.assign({ groupBy: 'model' as const, limit: 1 }, window()));
      expect(cut).toMatchObject({ truncated: true, totals: byModel.totals });
      expect(cut.rows).toHaveLength(1);
      const day = await ctx.store.usageReport(Object.assign({ groupBy: 'day' as const }, window()));
      expect(day.rows.every((r) => /^\d{4}-\d{2}-\d{2}$/.test(r.key))).toBe(true);
    });

    it('answers no rows and zero totals for a window with no usage', async () => {
      const report = await ctx.store.usageReport({ groupBy: 'day', from: '2001-01-01T00:00:00Z', to: '2001-02-01T00:00:00Z' });
      expect(report).toEqual({ rows: [], truncated: false, totals: { llmCalls: 0, inputs: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, costPicoUsd: '0', unpricedCalls: 0 } });
    });

    it.each([
      ['from after to', { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }],
      ['from equal to to', { from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }],
      ['a bad date', { from: 'yesterday' }],
      ['an unknown grouping', { groupBy: 'week' }],
      ['a bad tenant', { tenant: 'a b' }],
      ['a bad limit', { limit: 0 }],
      ['an unknown field', { where: 'x' }],
    ])('refuses %s with input.invalid', async (_what, change) => {
      await expectCode(ctx.store.usageReport(Object.assign({ groupBy: 'day', from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' }, change) as UsageQuery), 'input.invalid');
    });
  });
}

function expectTotalsSumRows(report: UsageReportRows): void {
  expect(report.truncated).toBe(false);
  for (const field of NUMERIC) expect(report.totals[field]).toBe(report.rows.reduce((sum, row) => sum + row[field], 0));
  expect(report.totals.costPicoUsd).toBe(report.rows.reduce((sum, row) => sum + BigInt(row.costPicoUsd), 0n).toString());
}
