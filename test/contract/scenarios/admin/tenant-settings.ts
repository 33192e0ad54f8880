import { describe, expect, it } from 'vitest';
import type { TenantSettingsPatch } from '../../../../src/core/ports/tenant-admin.js';
import { expectCode, type ContractContext } from '../../contract-helpers.js';

/** Tenant settings as an operator sets them: a patch over the stored row, defaults for what was never set. */
export function tenantSettingsScenarios(ctx: ContractContext): void {
  describe('tenant settings', () => {
    it('creates a row with the defaults for what is not given, then changes only what a patch names', async () => {
      const tenant = ctx.id('settings');
      expect(await ctx.store.getTenantSettings(tenant)).toBeNull();
      expect(await ctx.store.setTenantSettings(tenant, { maxConcurrentInputs: 2 })).toMatchObject({ tenant, weight: 100, maxConcurrentInputs: 2, maxInputsPerSecond: null });
      expect(await ctx.store.setTenantSettings(tenant, { weight: 300, maxInputsPerSecond: 2.5 })).toMatchObject({ weight: 300, maxConcurrentInputs: 2, maxInputsPerSecond: 2.5 });
      expect(await ctx.store.setTenantSettings(tenant, { maxConcurrentInputs: null })).toMatchObject({ weight: 300, maxConcurrentInputs: null, maxInputsPerSecond: 2.5 });
      expect(await ctx.store.getTenantSettings(tenant)).toMatchObject({ weight: 300, maxConcurrentInputs: null, maxInputsPerSecond: 2.5 });
    });

    it.each([
      ['a weight of 0', { weight: 0 }],
      ['a weight past 10000', { weight: 10_001 }],
      ['a fractional weight', { weight: 1.5 }],
      ['a null weight', { weight: null }],
      ['a concurrency cap of 0', { maxConcurrentInputs: 0 }],
      ['a zero rate', { maxInputsPerSecond: 0 }],
      ['an infinite rate', { maxInputsPerSecond: Number.POSITIVE_INFINITY }],
      ['a rate as text', { maxInputsPerSecond: '5' }],
      ['an unknown field', { priority: 1 }],
    ])('refuses %s with input.invalid, writing nothing', async (_what, patch) => {
      const tenant = ctx.id('settings-bad');
      await expectCode(ctx.store.setTenantSettings(tenant, patch as TenantSettingsPatch), 'input.invalid');
      expect(await ctx.store.getTenantSettings(tenant)).toBeNull();
    });

    it('refuses a bad tenant name; lists by name after a cursor; deletes', async () => {
      await expectCode(ctx.store.setTenantSettings('a b', { weight: 5 }), 'input.invalid');
      const prefix = ctx.id('settings-list');
      for (const name of ['b', 'a', 'c']) await ctx.store.setTenantSettings(`${prefix}-${name}`, { weight: 7 });
      const page = await ctx.store.listTenantSettings({ after: `${prefix}-a`, limit: 2 });
      expect(page.map((row) => row.tenant)).toEqual([`${prefix}-b`, `${prefix}-c`]);
      expect(await ctx.store.deleteTenantSettings(`${prefix}-b`)).toBe(true);
      expect(await ctx.store.deleteTenantSettings(`${prefix}-b`)).toBe(false);
      expect((await ctx.store.listTenantSettings({ after: `${prefix}-a`, limit: 2 })).map((row) => row.tenant)).toEqual([`${prefix}-c`]);
      await expectCode(ctx.store.listTenantSettings({ limit: 1001 }), 'input.invalid');
    });
  });
}
