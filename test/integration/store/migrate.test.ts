import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../../../src/store/postgres/migrate.js';
import { packageRoot } from '../../../src/store/postgres/package-paths.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('runMigrations', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('migrate', { migrate: false });
  });

  afterAll(async () => {
    await db.drop();
  });

  it('creates the schema on an empty database, then does nothing', async () => {
    const first = await runMigrations({ databaseUrl: db.url });
    expect(first.applied).toEqual(['0000_init', '0001_finishes_owed', '0002_window_epoch', '0003_finishes_owed_sweep', '0004_agent_registry', '0005_cache_write_tokens', '0006_agent_registry_stopped', '0007_child_sessions', '0008_session_tenant', '0009_tenant_budgets', '0010_budget_functions', '0011_trace_context', '0012_session_queue', '0013_budget_batch']);
    const second = await runMigrations({ databaseUrl: db.url });
    expect(second.applied).toEqual([]);
    expect(second.total).toBe(first.total);
    expect(await tableNames(db.url)).toEqual(
      ['agent_registry', 'budget_reservations', 'budget_usage', 'budgets', 'compactions', 'messages', 'session_inputs', 'sessions', 'tenant_settings', 'timers', 'tool_calls', 'usage_rounds'],
    );
  });
});

describe('the migrations after 0000_init on a database at 0000_init', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('migrate_upgrade', { migrate: false });
  });

  afterAll(async () => {
    await db.drop();
  });

  it('adds the flag set on every existing session (their next drains check for owed finishes) and a distinct window epoch for each', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // The database as 0000_init left it, recorded in drizzle's journal as drizzle records it.
      const folder = join(packageRoot(), 'src', 'store', 'migrations');
      const init = readFileSync(join(folder, '0000_init.sql'), 'utf8');
      for (const statement of init.split('--> statement-breakpoint')) await client.query(statement);
      const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] };
      await client.query('CREATE SCHEMA drizzle');
      await client.query('CREATE TABLE drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)');
      await client.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [
        createHash('sha256').update(init).digest('hex'),
        journal.entries.find((entry) => entry.tag === '0000_init')!.when,
      ]);
      await client.query(`INSERT INTO sessions (id) VALUES ('before-upgrade'), ('before-upgrade-2')`);
      const upgrade = await runMigrations({ databaseUrl: db.url });
      expect(upgrade.applied).toEqual(['0001_finishes_owed', '0002_window_epoch', '0003_finishes_owed_sweep', '0004_agent_registry', '0005_cache_write_tokens', '0006_agent_registry_stopped', '0007_child_sessions', '0008_session_tenant', '0009_tenant_budgets', '0010_budget_functions', '0011_trace_context', '0012_session_queue', '0013_budget_batch']);
      expect((await client.query(`SELECT finishes_owed FROM sessions WHERE id = 'before-upgrade'`)).rows).toEqual([{ finishes_owed: true }]);
      // Every existing session gets its own epoch from the sequence; new ones continue it.
      await client.query(`INSERT INTO sessions (id) VALUES ('after-upgrade')`);
      const epochs = await client.query<{ e: string }>(`SELECT window_epoch AS e FROM sessions ORDER BY window_epoch`);
      expect(new Set(epochs.rows.map((row) => row.e)).size).toBe(3);
      // Sessions from before the cache write was counted start it at 0.
      expect((await client.query(`SELECT stat_cache_write_tokens AS w FROM sessions WHERE id = 'before-upgrade'`)).rows).toEqual([{ w: '0' }]);
    } finally {
      await client.end();
    }
  });
});

async function tableNames(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    return result.rows.map((row) => row.table_name);
  } finally {
    await client.end();
  }
}
