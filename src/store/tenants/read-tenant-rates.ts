import { z } from 'zod';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';

const rateSchema = z.object({ tenant: z.string(), rate: z.number().positive() });
const tenantSchema = z.object({ tenant: z.string() });

/** Most tenants with an admission rate one read returns; past it, the rest are not rate limited. */
const MAX_RATED_TENANTS = 100_000;

/** Params: $1 limit. */
const READ_TENANT_RATES_SQL = `
SELECT tenant, max_inputs_per_second AS "rate"
  FROM tenant_settings
 WHERE max_inputs_per_second IS NOT NULL
 ORDER BY tenant
 LIMIT $1`;

/**
 * Every tenant with an admission rate (`maxInputsPerSecond`) and its rate, in one read: an accept
 * path asks once every few seconds whatever the number of tenants, and an empty answer tells it no
 * input needs a check.
 */
export async function readTenantRates(db: Queryable): Promise<Map<string, number>> {
  const result = await db.query(READ_TENANT_RATES_SQL, [MAX_RATED_TENANTS]);
  const rates = new Map<string, number>();
  for (const row of result.rows) {
    const { tenant, rate } = parseRow(rateSchema, row, 'tenant_settings rate');
    rates.set(tenant, rate);
  }
  return rates;
}

/** The tenant of session `sessionId`, or null when there is no such session. One primary-key read. */
export async function readSessionTenant(db: Queryable, sessionId: string): Promise<string | null> {
  const result = await db.query(`SELECT tenant FROM sessions WHERE id = $1`, [sessionId]);
  return result.rows[0] === undefined ? null : parseRow(tenantSchema, result.rows[0], `tenant of session ${sessionId}`).tenant;
}
