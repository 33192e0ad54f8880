import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { withConnection } from '../../../src/store/postgres/connection.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { pollUntil } from './store-fixture.js';

describe('withConnection and createPgPool', () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase('transaction');
    pool = createPgPool(db.url, { applicationName: 'loopfleet-tx-test', maxConnections: 2 });
    await pool.query('CREATE TABLE probe (id int, CONSTRAINT probe_id_uq UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)');
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function probeIds(): Promise<number[]> {
    return (await pool.query<{ id: number }>('SELECT id FROM probe ORDER BY id')).rows.map((row) => row.id);
  }

  /** Backends of this pool (by its application name). */
  async function livePids(): Promise<number[]> {
    const result = await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'loopfleet-tx-test'");
    return result.rows.map((row) => row.pid);
  }

  it('runs the work on one connection, each statement committing on its own, and reuses the connection', async () => {
    const pids = await withConnection(pool, async (client) => {
      await client.query('INSERT INTO probe VALUES (1)');
      // Committed already: another connection sees it while this one is still checked out.
      expect(await probeIds()).toEqual([1]);
      return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    });
    const again = await withConnection(pool, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    // Handed back healthy: the next checkout reuses it (the pool takes the most recently released).
    expect(again).toBe(pids);
  });

  it('rethrows what the work threw and discards its connection (state unknown)', async () => {
    const failure = new Error('work failed');
    let used = 0;
    await expect(
      withConnection(pool, async (client) => {
        used = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        throw failure;
      }),
    ).rejects.toBe(failure);
    // The pool ends the discarded connection without waiting for the server, whose backend exits
    // just after: poll until it has gone. A connection handed back for reuse would stay.
    await pollUntil(async () => ((await livePids()).includes(used) ? undefined : true), 5_000, `backend ${used} to exit`);
  });

  it('survives the connection dying under it: the error reaches the caller, the pool stays usable', async () => {
    const error = await withConnection(pool, async (client) => {
      await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    const both = await Promise.all([pool.query('SELECT 1 AS one'), pool.query('SELECT 1 AS one')]);
    expect(both.map((result) => result.rows[0])).toEqual([{ one: 1 }, { one: 1 }]);
  });

  it('parses bigint as a number on its own pool only, leaving pg.types untouched', async () => {
    const own = await pool.query<{ n: unknown; big: unknown }>('SELECT 42::int8 AS n, 9007199254740993::int8 AS big');
    expect(own.rows[0]).toEqual({ n: 42, big: '9007199254740993' });

    const plain = new pg.Client({ connectionString: db.url });
    await plain.connect();
    try {
      const other = await plain.query<{ n: unknown }>('SELECT 42::int8 AS n');
      expect(other.rows[0]?.n).toBe('42');
    } finally {
      await plain.end();
    }
  });

  it('names its connections', async () => {
    const result = await pool.query<{ name: string }>('SELECT application_name AS name FROM pg_stat_activity WHERE pid = pg_backend_pid()');
    expect(result.rows[0]?.name).toBe('loopfleet-tx-test');
  });
});
