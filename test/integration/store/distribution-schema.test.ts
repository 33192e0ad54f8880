import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { SESSION_TABLES } from './fixtures/session-tables.js';

/**
 * The schema is ready to distribute by session (docs/postgres-distribution.md): read from the catalog
 * of a migrated database, every table is keyed by its session id first — except the global tables
 * listed here with their reason, which become reference tables — and no key, unique constraint or
 * foreign key spans sessions, except the one listed as known. A new table, constraint or sequence
 * fails this test until it is classified here (and in the doc).
 */


/** Tables that belong to no session (reference tables on Citus), and why. */
const GLOBAL_TABLES: Record<string, string> = {
  agent_registry: 'which worker serves which agent: fleet-wide, read by every accept that names an agent',
  tenant_settings: "a tenant's weight, cap and rate: one row per tenant, read by capped lease takes and admission",
  budgets: 'spending caps on a tenant, an agent or a session tree: looked up by tenant and scope',
  budget_usage: "a budget's spending per window: keyed by budget, shared by every session the budget covers",
};

/** Foreign keys that span sessions, known and reported (docs/postgres-distribution.md, "What does not distribute yet"). */
const CROSS_SESSION_FOREIGN_KEYS = ['sessions.parent_session_id -> sessions(id)'];

/** Database-wide sequences, and why they are global. */
const GLOBAL_SEQUENCES: Record<string, string> = {
  lease_token_seq: 'fencing tokens must grow for a session id even across delete and re-create',
  window_epoch_seq: 'window epochs must never repeat for a session id, for the same reason',
};

describe('the schema is keyed by session for distribution', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('dist_schema');
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  async function rows<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
    return (await client.query<T>(sql)).rows;
  }

  it('every table is a session table or a listed global one', async () => {
    const tables = (await rows<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1")).map((row) => row.name);
    expect(tables).toEqual([...Object.keys(SESSION_TABLES), ...Object.keys(GLOBAL_TABLES)].sort());
  });

  it("every session table's primary key and every unique index on it start with the session id", async () => {
    const indexes = await rows<{ table: string; index: string; columns: string[]; primary: boolean }>(`
      SELECT t.relname AS table, i.relname AS index, i2.indisprimary AS primary,
             array(SELECT a.attname FROM unnest(i2.indkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
        FROM pg_index i2 JOIN pg_class i ON i.oid = i2.indexrelid JOIN pg_class t ON t.oid = i2.indrelid
       WHERE t.relnamespace = 'public'::regnamespace AND i2.indisunique`);
    const keyed = indexes.filter((index) => index.table in SESSION_TABLES);
    expect(new Set(keyed.filter((index) => index.primary).map((index) => index.table))).toEqual(new Set(Object.keys(SESSION_TABLES)));
    const offKey = keyed.filter((index) => index.columns[0] !== SESSION_TABLES[index.table]).map((index) => `${index.table}.${index.index} (${index.columns.join(', ')})`);
    expect(offKey).toEqual([]);
    // Exclusion constraints would need the same; there are none.
    expect(await rows("SELECT conname FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype = 'x'")).toEqual([]);
  });

  it('foreign keys join a session table to its own session only (the known exception listed), and global tables only to global ones', async () => {
    const keys = await rows<{ from: string; columns: string[]; to: string; to_columns: string[] }>(`
      SELECT c.conrelid::regclass::text AS from, c.confrelid::regclass::text AS to,
             array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns,
             array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS to_columns
        FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace AND c.contype = 'f'`);
    const describe = (key: (typeof keys)[number]) => `${key.from}.${key.columns.join(',')} -> ${key.to}(${key.to_columns.join(',')})`;
    const sameSession = (key: (typeof keys)[number]) =>
      key.from in SESSION_TABLES && key.to in SESSION_TABLES && key.columns[0] === SESSION_TABLES[key.from] && key.to_columns[0] === SESSION_TABLES[key.to];
    const bothGlobal = (key: (typeof keys)[number]) => key.from in GLOBAL_TABLES && key.to in GLOBAL_TABLES;
    expect(keys.filter((key) => !sameSession(key) && !bothGlobal(key)).map(describe).sort()).toEqual(CROSS_SESSION_FOREIGN_KEYS);
    // Every child table of a session cascades from it, so a session's rows leave with it on any node.
    for (const key of keys.filter(sameSession)) expect(describe(key)).toMatch(/-> sessions\(id\)$/);
  });

  it('the only sequences are the listed global ones (no serial keys)', async () => {
    const sequences = (await rows<{ name: string }>("SELECT sequence_name AS name FROM information_schema.sequences WHERE sequence_schema = 'public' ORDER BY 1")).map((row) => row.name);
    expect(sequences).toEqual(Object.keys(GLOBAL_SEQUENCES).sort());
  });
});
