import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../../../src/store/migrate.js';
import { packageRoot } from '../../../src/store/package-paths.js';
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
    expect(first.applied).toEqual(['0000_init', '0001_finishes_owed']);
    const second = await runMigrations({ databaseUrl: db.url });
    expect(second.applied).toEqual([]);
    expect(second.total).toBe(first.total);
    expect(await tableNames(db.url)).toEqual(
      ['compactions', 'messages', 'session_inputs', 'sessions', 'timers', 'tool_calls', 'usage_rounds'],
    );
  });
});

describe('0001_finishes_owed on a database at 0000_init', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('migrate_upgrade', { migrate: false });
  });

  afterAll(async () => {
    await db.drop();
  });

  it('adds the flag set on every existing session, so their next drains check for owed finishes', async () => {
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
      await client.query(`INSERT INTO sessions (id) VALUES ('before-upgrade')`);
      const upgrade = await runMigrations({ databaseUrl: db.url });
      expect(upgrade.applied).toEqual(['0001_finishes_owed']);
      expect((await client.query(`SELECT finishes_owed FROM sessions WHERE id = 'before-upgrade'`)).rows).toEqual([{ finishes_owed: true }]);
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
