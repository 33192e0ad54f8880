import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../../../src/store/migrate.js';
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
    expect(first.applied).toEqual(['0000_init']);
    const second = await runMigrations({ databaseUrl: db.url });
    expect(second.applied).toEqual([]);
    expect(second.total).toBe(first.total);
    expect(await tableNames(db.url)).toEqual(
      ['compactions', 'messages', 'session_inputs', 'sessions', 'timers', 'tool_calls', 'usage_rounds'],
    );
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
