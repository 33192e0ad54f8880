import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliProcess } from '../../support/run-cli-process.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

/** Every migration the package ships, as the migrator reads them. */
const JOURNAL = JSON.parse(readFileSync(new URL('../../../src/store/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] };

describe('loopfleet migrate (processes)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('migrate_procs', { migrate: false });
  });

  afterAll(async () => {
    await db.drop();
  });

  it('three processes migrating at once leave one consistent schema', async () => {
    const runs = await Promise.all([1, 2, 3].map(() => runCliProcess(['migrate'], { DATABASE_URL: db.url })));
    for (const run of runs) expect(run.stderr).toBe('');
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0]);
    // Exactly one of them applied the migrations; the others found the database up to date.
    expect(runs.filter((run) => run.stdout.includes('applied 0000_init'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0001_finishes_owed'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0002_window_epoch'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0003_finishes_owed_sweep'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0004_agent_registry'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0005_cache_write_tokens'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0006_agent_registry_stopped'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0007_child_sessions'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('0010_budget_functions'))).toHaveLength(1);
    expect(runs.filter((run) => run.stdout.includes('up to date'))).toHaveLength(2);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const applied = await client.query('SELECT hash FROM drizzle.__drizzle_migrations');
      expect(applied.rowCount).toBe(JOURNAL.entries.length);
      const tables = await client.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'");
      expect(tables.rows[0].n).toBe(12);
    } finally {
      await client.end();
    }
  });

  it('--create-database creates a missing database, then migrates it', async () => {
    const url = new URL(db.url);
    url.pathname = `/${db.name}_new`;
    const run = await runCliProcess(['migrate', '--create-database'], { DATABASE_URL: url.toString() });
    try {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('applied 0000_init');
    } finally {
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${db.name}_new" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('--create-database creates the database pg then connects to, whatever the URL escapes (%2F stays as pg reads it)', async () => {
    const url = new URL(db.url);
    url.pathname = `/${db.name}_esc%2Fx`;
    // pg decodes the path with decodeURI, which leaves %2F as it is: that is the database's name.
    const name = `${db.name}_esc%2Fx`;
    const run = await runCliProcess(['migrate', '--create-database'], { DATABASE_URL: url.toString() });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const created = await admin.query('SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname', [`${db.name}_esc%`]);
      expect(created.rows.map((row: { datname: string }) => row.datname)).toEqual([name]);
    } finally {
      for (const orphan of [name, `${db.name}_esc/x`]) await admin.query(`DROP DATABASE IF EXISTS "${orphan}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
