import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PGBOUNCER_MISSING, pgbouncerAvailable, startPgBouncer, type RunningPgBouncer } from '../../support/pgbouncer.js';
import { runCliProcess } from '../../support/run-cli-process.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

/**
 * What transaction pooling breaks and what `DATABASE_POOLER=transaction` does about it
 * (docs/postgres-pooling.md), against a real PgBouncer 1.18 with ONE server connection, so every
 * client's statements meet on it: named prepared statements collide there, unnamed ones do not; the
 * statement_timeout startup parameter is refused; migrations hold their lock for one transaction.
 */
if (!pgbouncerAvailable()) console.warn(`pooled connections: ${PGBOUNCER_MISSING}`);

/** Every migration the package ships, as the migrator reads them. */
const JOURNAL_ENTRIES = (JSON.parse(readFileSync(new URL('../../../src/store/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] }).entries.length;

describe.runIf(pgbouncerAvailable())('pools and migrations through PgBouncer in transaction mode', () => {
  let bouncer: RunningPgBouncer;
  let db: TestDatabase;

  beforeAll(async () => {
    bouncer = await startPgBouncer(inject('postgresAdminUrl'), { poolSize: 1 });
    db = await createTestDatabase('pgb_pool', { migrate: false });
  });

  afterAll(async () => {
    await db?.drop();
    await bouncer?.stop();
  });

  /** Two pool clients each run the same named statement once, one after the other, on the one server connection. */
  async function namedTwice(pool: pg.Pool): Promise<number[]> {
    const [a, b] = [await pool.connect(), await pool.connect()];
    try {
      const answers: number[] = [];
      for (const client of [a, b]) {
        const result = await client.query<{ n: number }>({ name: 'loopfleet_pooled_probe', text: 'SELECT $1::int AS n', values: [answers.length + 1] });
        answers.push(result.rows[0]!.n);
      }
      return answers;
    } finally {
      a.release(true);
      b.release(true);
    }
  }

  it('named statements collide on a shared server connection; with pooler transaction they go unnamed and pass', async () => {
    const url = bouncer.via(db.url);
    const named = createPgPool(url, { pooler: 'none', statementTimeoutMs: 0 });
    try {
      await expect(namedTwice(named)).rejects.toMatchObject({ code: '42P05' });
    } finally {
      await named.end();
    }
    const unnamed = createPgPool(url, { pooler: 'transaction' });
    try {
      expect(await namedTwice(unnamed)).toEqual([1, 2]);
      // Config objects without values still go as simple queries (several statements at once).
      const multi = (await unnamed.query({ name: 'loopfleet_pooled_multi', text: 'SELECT 1 AS a; SELECT 2 AS b' })) as unknown as pg.QueryResult[];
      expect(multi.map((result) => result.rows[0])).toEqual([{ a: 1 }, { b: 2 }]);
    } finally {
      await unnamed.end();
    }
  });

  it('pooler none sends statement_timeout, which PgBouncer refuses; session and transaction send none', async () => {
    const url = bouncer.via(db.url);
    for (const pooler of ['none', 'session', 'transaction'] as const) {
      const pool = createPgPool(url, { pooler, connectionTimeoutMs: 5_000 });
      try {
        const outcome = await pool.query('SELECT 1 AS one').then(
          (result) => result.rows[0] as unknown,
          (error: Error) => error.message,
        );
        expect([pooler, outcome]).toEqual([pooler, pooler === 'none' ? 'unsupported startup parameter: statement_timeout' : { one: 1 }]);
      } finally {
        await pool.end();
      }
    }
  });

  it('refuses an unknown pooler with config.invalid', () => {
    expect(() => createPgPool(db.url, { pooler: 'statement' as never })).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });

  it('three `loopfleet migrate` processes at once through the pooler: one applies, two find it up to date, no lock left behind', async () => {
    // Room for all three on the server, so they meet on the lock rather than in PgBouncer's queue.
    const roomy = await startPgBouncer(inject('postgresAdminUrl'), { poolSize: 4 });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const url = roomy.via(db.url);
      const runs = await Promise.all([1, 2, 3].map(() => runCliProcess(['migrate'], { DATABASE_URL: url, DATABASE_POOLER: 'transaction' })));
      for (const run of runs) expect(run.stderr).toBe('');
      expect(runs.map((run) => run.code)).toEqual([0, 0, 0]);
      expect(runs.filter((run) => run.stdout.includes('applied 0000_init'))).toHaveLength(1);
      expect(runs.filter((run) => run.stdout.includes('up to date'))).toHaveLength(2);
      expect((await client.query('SELECT hash FROM drizzle.__drizzle_migrations')).rowCount).toBe(JOURNAL_ENTRIES);
      // The pooler keeps its server connections open: a session-level lock would still be held on one.
      expect((await client.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory'")).rowCount).toBe(0);
    } finally {
      await client.end();
      await roomy.stop();
    }
  });

  it('migrate --create-database through the pooler creates the database and migrates it', async () => {
    const url = new URL(bouncer.via(db.url));
    url.pathname = `/${db.name}_new`;
    const run = await runCliProcess(['migrate', '--create-database'], { DATABASE_URL: url.toString(), DATABASE_POOLER: 'transaction' });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('applied 0000_init');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${db.name}_new" WITH (FORCE)`);
      await admin.end();
    }
  });
});
