import type { ListTenantSettingsOptions, TenantSettingsPatch, TenantSettingsRecord } from '../../../src/core/ports/tenant-admin.js';
import { assertTenant, resolveTenantList, resolveTenantPatch, TENANT_WEIGHT } from '../../../src/store/tenants/tenant-settings-options.js';
import { compareText } from './in-memory-store-rows.js';

/** The `tenant_settings` table in memory, with the Postgres store's checks and patch rules. */
export class InMemoryTenantSettings {
  readonly #rows = new Map<string, TenantSettingsRecord>();

  constructor(private readonly now: () => number) {}

  set(tenant: unknown, patch: TenantSettingsPatch): TenantSettingsRecord {
    const name = assertTenant(tenant);
    const p = resolveTenantPatch(patch);
    const at = new Date(this.now());
    const row = this.#rows.get(name) ?? { tenant: name, weight: TENANT_WEIGHT.default, maxConcurrentInputs: null, maxInputsPerSecond: null, createdAt: at, updatedAt: at };
    if (p.weight !== undefined) row.weight = p.weight;
    if (p.maxConcurrentInputs !== undefined) row.maxConcurrentInputs = p.maxConcurrentInputs;
    if (p.maxInputsPerSecond !== undefined) row.maxInputsPerSecond = p.maxInputsPerSecond;
    row.updatedAt = at;
    this.#rows.set(name, row);
    return structuredClone(row);
  }

  get(tenant: unknown): TenantSettingsRecord | null {
    const row = this.#rows.get(assertTenant(tenant));
    return row === undefined ? null : structuredClone(row);
  }

  list(options: ListTenantSettingsOptions | undefined): TenantSettingsRecord[] {
    const { limit, after } = resolveTenantList(options);
    return [...this.#rows.values()]
      .filter((row) => after === null || compareText(row.tenant, after) > 0)
      .sort((a, b) => compareText(a.tenant, b.tenant))
      .slice(0, limit)
      .map((row) => structuredClone(row));
  }

  delete(tenant: unknown): boolean {
    return this.#rows.delete(assertTenant(tenant));
  }
}
