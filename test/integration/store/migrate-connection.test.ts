import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../../../src/store/postgres/migrate.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../../support/test-database.js';
import { startsStatement, startTcpProxyTo, type TcpProxy } from '../../support/tcp-proxy.js';
import { pollUntil } from './store-fixture.js';

/** The advisory lock `runMigrations` takes (src/store/postgres/migrate.ts); advisory locks are per database. */
const MIGRATION_LOCK_KEY = '7210443551002001';

/** Collects uncaught exceptions while `work` runs and until it has settled. */
async function uncaughtDuring<T>(work: () => Promise<T>): Promise<{ outcome: { value: T } | { error: unknown }; uncaught: unknown[] }> {
  const uncaught: unknown[] = [];
  const record = (error: unknown): void => void uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const outcome = await work().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    // A connection's close is reported on a later turn than the statement's failure: let it run.
    await new Promise((resolve) => setImmediate(resolve));
    return { outcome, uncaught };
  } finally {
    process.off('uncaughtException', record);
  }
}

describe('runMigrations when its connection is lost', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;

  beforeAll(async () => {
    db = await createTestDatabase('migrate_conn');
    proxy = await startTcpProxyTo(db.url);
  });

  afterAll(async () => {
    await proxy.close();
    await db.drop();
  });

  /**
   * The pid of the backend of `runMigrations` once it waits on a lock. Read on a connection of its
   * own: one inside a transaction sees `pg_stat_activity` as of its first look.
   */
  async function migrationWaiting(): Promise<number> {
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    try {
      return await pollUntil(
        async () =>
          (
            await watcher.query<{ pid: number }>(
              `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'loopfleet-migrate' AND wait_event_type = 'Lock'`,
            )
          ).rows[0]?.pid,
        5_000,
        'the migration to wait on a lock',
      );
    } finally {
      await watcher.end();
    }
  }

  /** Runs the migrations, terminates their backend (through `holder`) once they wait on a lock, and reports the outcome and any uncaught exception. */
  function migrationTerminated(holder: pg.Client) {
    return uncaughtDuring(async () => {
      const running = runMigrations({ databaseUrl: db.url });
      // Handled now; awaited below once the backend is terminated.
      running.catch(() => {});
      await holder.query('SELECT pg_terminate_backend($1)', [await migrationWaiting()]);
      return running;
    });
  }

  it('rejects with the error that ended it (terminated while it holds the advisory lock), without an uncaught exception', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      // The run takes the advisory lock, then waits to read the migrations table, which this holds.
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE drizzle.__drizzle_migrations IN ACCESS EXCLUSIVE MODE');
      const { outcome, uncaught } = await migrationTerminated(holder);
      // 57P01 admin_shutdown: the FATAL that ended the connection, not the unlock that failed after it.
      expect(outcome).toEqual({ error: expect.objectContaining({ code: '57P01' }) });
      expect(uncaught).toEqual([]);
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
    // The lock died with the connection: the next run gets it at once.
    expect(await runMigrations({ databaseUrl: db.url })).toMatchObject({ applied: [] });
  });

  it('rejects with the error that ended it (terminated while waiting on the advisory lock), without an uncaught exception', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const { outcome, uncaught } = await migrationTerminated(holder);
      expect(outcome).toEqual({ error: expect.objectContaining({ code: '57P01' }) });
      expect(uncaught).toEqual([]);
    } finally {
      await holder.end();
    }
  });

  it('ensureDatabase (--create-database) rejects when its connection drops mid-statement, without an uncaught exception', async () => {
    const missing = new URL(proxy.via(db.url));
    missing.pathname = `/${uniqueName('never_created')}`;
    // Its first statement (reading pg_database) never arrives; then the network drops the connection.
    proxy.silenceWhen(startsStatement);
    try {
      const { outcome, uncaught } = await uncaughtDuring(async () => {
        const running = runMigrations({ databaseUrl: missing.toString(), createDatabase: true });
        running.catch(() => {});
        await pollUntil(() => Promise.resolve(proxy.silenced() === 1 ? true : undefined), 5_000, 'the first statement to be sent');
        proxy.cut();
        return running;
      });
      expect(outcome).toEqual({ error: expect.objectContaining({ message: expect.stringMatching(/ECONNRESET|terminated/) }) });
      expect(uncaught).toEqual([]);
    } finally {
      proxy.silenceWhen(() => false);
    }
  });
});
