import { InputInvalidError } from '../../core/errors/index.js';
import type { ListTenantSettingsOptions, TenantSettingsPatch } from '../../core/ports/tenant-admin.js';
import { assertTenant } from '../../fleet/tenant-name.js';
import { isPlainObject } from '../postgres/arguments.js';

/** The bounds of each setting (the table's checks, and a ceiling that keeps a typo from lifting a cap for good). */
export const TENANT_WEIGHT = { min: 1, max: 10_000, default: 100 } as const;
export const MAX_CONCURRENT_INPUTS = 1_000_000;
export const MAX_INPUTS_PER_SECOND = 1_000_000;
export const MAX_TENANT_PAGE = 1000;

/** A patch checked: `undefined` keeps the stored value, null removes a cap. */
export interface ResolvedTenantPatch {
  weight: number | undefined;
  maxConcurrentInputs: number | null | undefined;
  maxInputsPerSecond: number | null | undefined;
}

const PATCH_KEYS = new Set(['weight', 'maxConcurrentInputs', 'maxInputsPerSecond']);

/** Checks a settings patch before any database work: `input.invalid` naming the field. */
export function resolveTenantPatch(value: unknown): ResolvedTenantPatch {
  if (!isPlainObject(value)) throw new InputInvalidError('tenant settings must be an object');
  const unknown = Object.keys(value).filter((key) => !PATCH_KEYS.has(key));
  if (unknown.length > 0) throw new InputInvalidError(`tenant settings have unknown field(s) ${unknown.slice(0, 10).join(', ')}`, { details: { fields: unknown.slice(0, 10) } });
  return {
    weight: value.weight === undefined ? undefined : integer(value.weight, 'weight', TENANT_WEIGHT.min, TENANT_WEIGHT.max),
    maxConcurrentInputs: value.maxConcurrentInputs === undefined || value.maxConcurrentInputs === null ? (value.maxConcurrentInputs as null | undefined) : integer(value.maxConcurrentInputs, 'maxConcurrentInputs', 1, MAX_CONCURRENT_INPUTS),
    maxInputsPerSecond: value.maxInputsPerSecond === undefined || value.maxInputsPerSecond === null ? (value.maxInputsPerSecond as null | undefined) : rate(value.maxInputsPerSecond),
  };
}

/** Checks the options of `listTenantSettings`. */
export function resolveTenantList(value: ListTenantSettingsOptions | undefined): { limit: number; after: string | null } {
  const o: unknown = value ?? {};
  if (!isPlainObject(o)) throw new InputInvalidError('tenant list options must be an object');
  const unknown = Object.keys(o).filter((key) => key !== 'limit' && key !== 'after');
  if (unknown.length > 0) throw new InputInvalidError(`tenant list options have unknown field(s) ${unknown.slice(0, 10).join(', ')}`, { details: { fields: unknown.slice(0, 10) } });
  return {
    limit: o.limit === undefined ? MAX_TENANT_PAGE : integer(o.limit, 'limit', 1, MAX_TENANT_PAGE),
    after: o.after === undefined ? null : assertTenant(o.after, 'after'),
  };
}

export { assertTenant };

function integer(value: unknown, field: string, min: number, max: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  throw new InputInvalidError(`${field} must be an integer from ${min} to ${max}${field === 'weight' ? '' : ', or null for no cap'}`, { details: { field, received: String(value).slice(0, 64) } });
}

function rate(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_INPUTS_PER_SECOND) return value;
  throw new InputInvalidError(`maxInputsPerSecond must be a number above 0 and at most ${MAX_INPUTS_PER_SECOND}, or null for no cap`, { details: { field: 'maxInputsPerSecond', received: String(value).slice(0, 64) } });
}
