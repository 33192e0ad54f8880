import type { ClientStore } from '../core/ports/client-store.js';
import type { ListTenantSettingsOptions, TenantSettingsPatch, TenantSettingsRecord } from '../core/ports/tenant-admin.js';

/**
 * `queue.tenants`: per-tenant dispatch settings (docs/client.md, "Tenant settings") — the weight of
 * its share of the workers, a cap on its inputs running at once, a cap on inputs admitted per second.
 * Workers read them through a short cache: a change applies within seconds.
 */
export class TenantAdmin {
  constructor(
    private readonly deps: {
      store: ClientStore;
      /** Runs an operation unless the queue is closed, and lets `close()` wait for it. */
      run: <T>(work: () => Promise<T>) => Promise<T>;
    },
  ) {}

  /**
   * Changes the fields given (null removes a cap) and keeps the others; a tenant set for the first
   * time starts from the defaults (weight 100, no caps). Throws `input.invalid` for a bad value.
   */
  async set(tenant: string, settings: TenantSettingsPatch): Promise<TenantSettingsRecord> {
    return this.deps.run(() => this.deps.store.setTenantSettings(tenant, settings));
  }

  /** The tenant's stored settings, or null when it has none (it runs with the defaults). */
  async get(tenant: string): Promise<TenantSettingsRecord | null> {
    return this.deps.run(() => this.deps.store.getTenantSettings(tenant));
  }

  /** Tenants with stored settings, by name; `limit` (≤ 1000) and `after` (a tenant name) page. */
  async list(options: ListTenantSettingsOptions = {}): Promise<TenantSettingsRecord[]> {
    return this.deps.run(() => this.deps.store.listTenantSettings(options));
  }

  /** Removes the tenant's settings (back to the defaults); false when it had none. */
  async delete(tenant: string): Promise<boolean> {
    return this.deps.run(() => this.deps.store.deleteTenantSettings(tenant));
  }
}
