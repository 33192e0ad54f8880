import type { Cluster, Redis } from 'ioredis';
import type { RedisConnection } from '../../fleet/redis-connection.js';
import type { FairDispatch } from '../../fleet/kick.js';
import { TenantSettingsCache } from '../../fleet/tenant-settings-cache.js';
import type { Queryable } from '../postgres/queryable.js';
import { readTenantSettings } from './read-tenant-settings.js';

/** A process's cache of `tenant_settings` over Postgres (TTL 2 s; docs/fair-dispatch.md). */
export function tenantSettingsCache(db: Queryable, onError: (error: unknown) => void): TenantSettingsCache {
  return new TenantSettingsCache({ read: (tenants) => readTenantSettings(db, tenants), onError });
}

/** Fair dispatch over a settings cache and the queue's Redis, or null when `FAIR_DISPATCH=false`. */
export function fairDispatch(enabled: boolean, settings: TenantSettingsCache, redis: RedisConnection | Cluster): FairDispatch | null {
  return enabled ? { weight: (tenant) => settings.weight(tenant), redis } : null;
}
