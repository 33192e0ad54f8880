import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { checkEveryCrashPoint } from '../../unit/core/loop/crash-scenario.js';

/** The loop's crash-point equivalence, on the real Postgres store (issue 3: "the same scenarios pass on the Postgres store"). */
describe('crash at every persisted step (Postgres store)', { timeout: 300_000 }, () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresSessionStore;
  let counter = 0;
  const fresh = async () => ({ store, sessionId: `crash-${++counter}` });

  beforeAll(async () => {
    db = await createTestDatabase('loop_crash');
    pool = createPgPool(db.url);
    store = new PostgresSessionStore(pool);
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('replays to the same history and results', async () => {
    const { commits } = await checkEveryCrashPoint(fresh, {});
    expect(commits).toBeGreaterThan(20);
  });

  it('replays to the same history with compaction', async () => {
    const { folded } = await checkEveryCrashPoint(fresh, { contextBudgetTokens: 120, compactKeepLastInputs: 1 });
    expect(folded).toBeGreaterThan(0);
  });
});
