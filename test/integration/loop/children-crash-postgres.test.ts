import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { checkChildCrashes } from '../../unit/core/loop/child-crash-scenario.js';

/**
 * The child sessions' crash equivalence (test/unit/core/loop/child-crash-scenario.ts) on the real
 * Postgres store: its spawn, park, claim-when-ready and keyed delivery statements. 50 repetitions with
 * random worker deaths, seeded (CHILD_CRASH_SEED reproduces a run).
 */
describe('child sessions: worker deaths at random points (Postgres store)', { timeout: 180_000 }, () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresSessionStore;

  beforeAll(async () => {
    db = await createTestDatabase('children_crash');
    pool = createPgPool(db.url);
    store = new PostgresSessionStore(pool);
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('50 repetitions: one child per call, one delivery per result, the parent finishes once, same histories', async () => {
    const seed = Number(process.env.CHILD_CRASH_SEED ?? Date.now() % 1_000_000);
    console.info(`children crash equivalence (Postgres): seed ${seed} (CHILD_CRASH_SEED=${seed} reproduces it)`);
    let counter = 0;
    const report = await checkChildCrashes(async () => ({ store, parent: `fanout-${++counter}` }), 50, seed);
    console.info(`children crash equivalence (Postgres, seed ${seed}): ${JSON.stringify(report)}`);
    expect(report.crashes).toBeGreaterThanOrEqual(50);
    expect(Object.keys(report.byPoint)).toEqual(expect.arrayContaining(['parent spawnChild', 'parent parkInput', 'child commitStep', 'child deliverChildResult']));
  });
});
