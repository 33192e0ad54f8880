import { sql } from 'drizzle-orm';
import { check, doublePrecision, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Per-tenant dispatch settings (docs/tenants.md). A tenant without a row has the defaults: weight
 * 100, no cap on inputs running at once, no cap on inputs admitted per second.
 */
export const tenantSettings = pgTable(
  'tenant_settings',
  {
    tenant: text('tenant').primaryKey(),
    /** Share of the workers when tenants compete, relative to others' (default 100). */
    weight: integer('weight').notNull().default(100),
    /** Inputs of the tenant running at once across the fleet; null: no cap. */
    maxConcurrentInputs: integer('max_concurrent_inputs'),
    /** Inputs of the tenant admitted per second (a token bucket); null: no cap. */
    maxInputsPerSecond: doublePrecision('max_inputs_per_second'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('tenant_settings_tenant_format', sql`${t.tenant} ~ '^[A-Za-z0-9_.:-]{1,128}$'`),
    check('tenant_settings_weight_valid', sql`${t.weight} between 1 and 10000`),
    check('tenant_settings_concurrency_valid', sql`${t.maxConcurrentInputs} is null or ${t.maxConcurrentInputs} > 0`),
    check('tenant_settings_rate_valid', sql`${t.maxInputsPerSecond} is null or ${t.maxInputsPerSecond} > 0`),
  ],
);
