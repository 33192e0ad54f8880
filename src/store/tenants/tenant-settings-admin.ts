import { z } from 'zod';
import type { ListTenantSettingsOptions, TenantSettingsPatch, TenantSettingsRecord } from '../../core/ports/tenant-admin.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { assertTenant, resolveTenantList, resolveTenantPatch, TENANT_WEIGHT } from './tenant-settings-options.js';

const COLUMNS = `tenant, weight, max_concurrent_inputs AS "maxConcurrentInputs", max_inputs_per_second AS "maxInputsPerSecond",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * Params: $1 tenant, $2 weight (null: keep, or the default on insert), $3 whether the concurrency cap is
 * given, $4 its value, $5 whether the rate cap is given, $6 its value. A field not given keeps what is
 * stored; a new row takes the defaults for it.
 */
const SET_SQL = `
INSERT INTO tenant_settings AS t (tenant, weight, max_concurrent_inputs, max_inputs_per_second)
VALUES ($1, COALESCE($2::int, ${TENANT_WEIGHT.default}), $4::int, $6::float8)
ON CONFLICT (tenant) DO UPDATE SET
  weight = COALESCE($2::int, t.weight),
  max_concurrent_inputs = CASE WHEN $3::boolean THEN excluded.max_concurrent_inputs ELSE t.max_concurrent_inputs END,
  max_inputs_per_second = CASE WHEN $5::boolean THEN excluded.max_inputs_per_second ELSE t.max_inputs_per_second END,
  updated_at = now()
RETURNING ${COLUMNS}`;

const rowSchema = z.object({
  tenant: z.string().min(1),
  weight: z.number().int().min(1).max(10_000),
  maxConcurrentInputs: z.number().int().positive().nullable(),
  maxInputsPerSecond: z.number().positive().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});

function decode(row: unknown): TenantSettingsRecord {
  return parseRow(rowSchema, row, `tenant_settings ${String((row as { tenant?: unknown } | null)?.tenant)}`);
}

/**
 * Sets a tenant's dispatch settings in one statement: the fields given change (null removes a cap),
 * the others keep their stored value (or the default, for a tenant without a row yet).
 */
export async function setTenantSettings(db: Queryable, tenant: unknown, patch: TenantSettingsPatch): Promise<TenantSettingsRecord> {
  const name = assertTenant(tenant);
  const p = resolveTenantPatch(patch);
  const result = await db.query(SET_SQL, [name, p.weight ?? null, p.maxConcurrentInputs !== undefined, p.maxConcurrentInputs ?? null, p.maxInputsPerSecond !== undefined, p.maxInputsPerSecond ?? null]);
  return decode(result.rows[0]);
}

/** A tenant's stored settings, or null (it runs with the defaults). */
export async function getTenantSettings(db: Queryable, tenant: unknown): Promise<TenantSettingsRecord | null> {
  const result = await db.query(`SELECT ${COLUMNS} FROM tenant_settings WHERE tenant = $1`, [assertTenant(tenant)]);
  const row: unknown = result.rows[0];
  return row === undefined ? null : decode(row);
}

/** Stored settings by tenant name (byte order), a page after `after`. */
export async function listTenantSettings(db: Queryable, options: ListTenantSettingsOptions | undefined): Promise<TenantSettingsRecord[]> {
  const { limit, after } = resolveTenantList(options);
  const result = await db.query(`SELECT ${COLUMNS} FROM tenant_settings WHERE $1::text IS NULL OR tenant COLLATE "C" > $1 ORDER BY tenant COLLATE "C" LIMIT $2`, [after, limit]);
  return result.rows.map((row: unknown) => decode(row));
}

/** Removes a tenant's settings (it runs with the defaults again); false when it had none. */
export async function deleteTenantSettings(db: Queryable, tenant: unknown): Promise<boolean> {
  const result = await db.query(`DELETE FROM tenant_settings WHERE tenant = $1`, [assertTenant(tenant)]);
  return (result.rowCount ?? 0) > 0;
}
