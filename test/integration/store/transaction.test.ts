import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../../src/store/pool.js';
import { withTransaction } from '../../../src/store/transaction.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('withTransaction and createPgPool', () => {
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

  it('commits what the work wrote', async () => {
    const value = await withTransaction(pool, async (client) => {
      await client.query('INSERT INTO probe VALUES (1)');
      return 'ok';
    });
    expect(value).toBe('ok');
    expect(await probeIds()).toEqual([1]);
  });

  it('rolls back and rethrows when the work throws', async () => {
    const failure = new Error('work failed');
    await expect(
      withTransaction(pool, async (client) => {
        await client.query('INSERT INTO probe VALUES (2)');
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await probeIds()).toEqual([1]);
  });

  it('surfaces a failed COMMIT as an error, with nothing written', async () => {
    const error = await withTransaction(pool, async (client) => {
      // The deferred unique check only runs at COMMIT.
      await client.query('INSERT INTO probe VALUES (3), (3)');
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: '23505' });
    expect(await probeIds()).toEqual([1]);
  });

  it('throws the original error when the ROLLBACK fails too, and discards the dead connection', async () => {
    const failure = new Error('original failure');
    const error = await withTransaction(pool, async (client) => {
      await client.query('INSERT INTO probe VALUES (4)');
      await client.query('SELECT pg_terminate_backend(pg_backend_pid())').catch(() => {});
      throw failure;
    }).catch((caught: unknown) => caught);
    expect(error).toBe(failure);
    expect(await probeIds()).toEqual([1]);
    // Both pool slots work: the terminated connection was not handed back for reuse.
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
