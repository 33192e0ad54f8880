import { DEFAULT_TENANT_WEIGHT } from './fair-priority.js';

/** What dispatch reads of a tenant's `tenant_settings` row. */
export interface CachedTenantSettings {
  /** Share of the workers when tenants compete, 1–10000. */
  weight: number;
  /** Inputs of the tenant running at once across the fleet; null: no cap. */
  maxConcurrentInputs: number | null;
  /** Inputs of the tenant admitted per second; null: no cap. */
  maxInputsPerSecond: number | null;
}

/** Reads the rows of some tenants in one round trip; a tenant without a row is absent from the map. */
export type TenantSettingsReader = (tenants: readonly string[]) => Promise<ReadonlyMap<string, CachedTenantSettings>>;

/** Options of {@link TenantSettingsCache}. */
export interface TenantSettingsCacheOptions {
  read: TenantSettingsReader;
  /** How long a read answer (a row, or no row) is used, in milliseconds. Default 2000. */
  ttlMs?: number;
  /** Tenants kept at most; past it the cache starts empty again. Default 10000. */
  maxTenants?: number;
  /** Milliseconds now (tests move it). Default `Date.now`. */
  now?: () => number;
  /** A read that failed: its tenants get the defaults until the next read, `ttlMs` later. */
  onError?: (error: unknown) => void;
}

interface Entry {
  settings: CachedTenantSettings | null;
  until: number;
}

/**
 * A process's view of `tenant_settings`, at most `ttlMs` old: every kick needs its tenant's weight,
 * and a Postgres read per kick would cost more than the kick. Tenants missed in the same tick share
 * one read. A change made by an operator takes effect within `ttlMs` on every process. A failed read
 * answers the defaults (weight 100, no caps) rather than failing a kick: a kick's priority is a hint,
 * the durable inbox is the truth.
 */
export class TenantSettingsCache {
  readonly #read: TenantSettingsReader;
  readonly #ttlMs: number;
  readonly #maxTenants: number;
  readonly #now: () => number;
  readonly #onError: (error: unknown) => void;
  readonly #entries = new Map<string, Entry>();
  #batch: Map<string, Array<(settings: CachedTenantSettings | null) => void>> | null = null;

  constructor(options: TenantSettingsCacheOptions) {
    this.#read = options.read;
    this.#ttlMs = options.ttlMs ?? 2_000;
    this.#maxTenants = options.maxTenants ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError ?? (() => undefined);
  }

  /** The tenant's row, or null when it has none (the defaults apply). Never rejects. */
  settings(tenant: string): Promise<CachedTenantSettings | null> {
    const entry = this.#entries.get(tenant);
    if (entry !== undefined && entry.until > this.#now()) return Promise.resolve(entry.settings);
    return new Promise((resolve) => this.#enqueue(tenant, resolve));
  }

  /** The tenant's weight, {@link DEFAULT_TENANT_WEIGHT} without a row. Never rejects. */
  async weight(tenant: string): Promise<number> {
    return (await this.settings(tenant))?.weight ?? DEFAULT_TENANT_WEIGHT;
  }

  #enqueue(tenant: string, resolve: (settings: CachedTenantSettings | null) => void): void {
    if (this.#batch === null) {
      this.#batch = new Map();
      queueMicrotask(() => void this.#flush());
    }
    const waiting = this.#batch.get(tenant);
    if (waiting === undefined) this.#batch.set(tenant, [resolve]);
    else waiting.push(resolve);
  }

  async #flush(): Promise<void> {
    const batch = this.#batch;
    this.#batch = null;
    if (batch === null) return;
    const tenants = [...batch.keys()];
    let rows: ReadonlyMap<string, CachedTenantSettings>;
    try {
      rows = await this.#read(tenants);
    } catch (error) {
      this.#onError(error);
      rows = new Map();
    }
    if (this.#entries.size + tenants.length > this.#maxTenants) this.#entries.clear();
    const until = this.#now() + this.#ttlMs;
    for (const [tenant, waiting] of batch) {
      const settings = rows.get(tenant) ?? null;
      this.#entries.set(tenant, { settings, until });
      for (const resolve of waiting) resolve(settings);
    }
  }
}
