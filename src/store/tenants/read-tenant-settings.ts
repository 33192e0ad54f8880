import { z } from 'zod';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';

/** A tenant's dispatch settings as stored; a tenant without a row has none of them (defaults). */
export interface TenantSettings {
  tenant: string;
  /** Share of the workers when tenants compete (1–10000, default 100). */
  weight: number;
  /** Inputs of the tenant running at once across the fleet; null: no cap. */
  maxConcurrentInputs: number | null;
  /** Inputs of the tenant admitted per second; null: no cap. */
  maxInputsPerSecond: number | null;
}

const settingsSchema = z.object({
  tenant: z.string(),
  weight: z.number().int().min(1).max(10_000),
  maxConcurrentInputs: z.number().int().positive().nullable(),
  maxInputsPerSecond: z.number().positive().nullable(),
});

/** Params: $1 a text array of tenants. */
const READ_TENANT_SETTINGS_SQL = `
SELECT tenant, weight, max_concurrent_inputs AS "maxConcurrentInputs", max_inputs_per_second AS "maxInputsPerSecond"
  FROM tenant_settings
 WHERE tenant = ANY($1::text[])`;

/**
 * The stored settings of `tenants`, one primary-key read for all of them. A tenant without a row is
 * absent from the map: it runs with the defaults.
 */
export async function readTenantSettings(db: Queryable, tenants: readonly string[]): Promise<Map<string, TenantSettings>> {
  const found = new Map<string, TenantSettings>();
  if (tenants.length === 0) return found;
  const result = await db.query(READ_TENANT_SETTINGS_SQL, [[...new Set(tenants)]]);
  for (const row of result.rows) {
    const settings = parseRow(settingsSchema, row, 'tenant_settings row');
    found.set(settings.tenant, settings);
  }
  return found;
}
