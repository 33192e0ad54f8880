import { InputInvalidError } from '../../core/errors/index.js';
import { USAGE_GROUPS, type UsageGroupBy, type UsageQuery } from '../../core/ports/tenant-admin.js';
import { assertAgentName } from '../../fleet/agent-name.js';
import { assertTenant } from '../../fleet/tenant-name.js';
import { isPlainObject } from '../postgres/arguments.js';

/** Groups a report answers when no limit is asked for, and the most it answers. */
export const DEFAULT_USAGE_GROUPS = 1000;
export const MAX_USAGE_GROUPS = 10_000;

/** {@link UsageQuery} checked: times as dates, the defaults applied (null: no such filter). */
export interface ResolvedUsageQuery {
  tenant: string | null;
  agent: string | null;
  from: Date;
  to: Date;
  groupBy: UsageGroupBy;
  limit: number;
}

const KEYS = new Set(['tenant', 'agent', 'from', 'to', 'groupBy', 'limit']);

/** Checks a usage query before any database work: `input.invalid` naming the field. */
export function resolveUsageQuery(value: unknown): ResolvedUsageQuery {
  if (!isPlainObject(value)) throw new InputInvalidError('usage query must be an object');
  const unknown = Object.keys(value).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) throw new InputInvalidError(`usage query has unknown field(s) ${unknown.slice(0, 10).join(', ')}`, { details: { fields: unknown.slice(0, 10) } });
  const from = toDate(value.from, 'from');
  const to = toDate(value.to, 'to');
  if (from.getTime() >= to.getTime()) throw new InputInvalidError('from must be before to', { details: { field: 'to', from: from.toISOString(), to: to.toISOString() } });
  if (!(USAGE_GROUPS as readonly unknown[]).includes(value.groupBy)) {
    throw new InputInvalidError(`groupBy must be one of ${USAGE_GROUPS.join(', ')}`, { details: { field: 'groupBy', received: String(value.groupBy).slice(0, 64) } });
  }
  const limit = value.limit ?? DEFAULT_USAGE_GROUPS;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_USAGE_GROUPS) {
    throw new InputInvalidError(`limit must be an integer from 1 to ${MAX_USAGE_GROUPS}`, { details: { field: 'limit', received: String(limit).slice(0, 64) } });
  }
  return {
    tenant: value.tenant === undefined ? null : assertTenant(value.tenant),
    agent: value.agent === undefined ? null : assertAgentName(value.agent),
    from,
    to,
    groupBy: value.groupBy as UsageGroupBy,
    limit,
  };
}

/** A `Date`, ISO 8601 text with a date, or epoch milliseconds; anything else (or an invalid date) is `input.invalid`. */
function toDate(value: unknown, field: string): Date {
  const date =
    value instanceof Date ? new Date(value.getTime())
    : typeof value === 'number' && Number.isFinite(value) ? new Date(value)
    : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value)
    : null;
  if (date !== null && Number.isFinite(date.getTime())) return date;
  throw new InputInvalidError(`${field} must be a date: a Date, ISO 8601 text such as 2026-11-01T00:00:00Z, or epoch milliseconds`, {
    details: { field, received: typeof value === 'string' ? value.slice(0, 64) : typeof value },
  });
}
