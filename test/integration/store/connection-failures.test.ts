import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStatementError, withConnection } from '../../../src/store/postgres/connection.js';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { startTcpProxyTo, type TcpProxy } from '../../support/tcp-proxy.js';
import { countRows, pollUntil, sessionId } from './store-fixture.js';

/** `promise`, or a rejection once `ms` have passed without it settling (so a hang fails the test). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** What a promise settled with, for assertions on either outcome. */
type Settled<T> = { value: T } | { error: unknown };

function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function send(id: string) {
  return { sessionId: id, kind: 'send' as const, payload: { text: 'hi' }, maxBytes: 10_000 };
}

/** Polls a synchronous condition with a deadline. */
function waitFor(condition: () => boolean, what: string): Promise<true> {
  return pollUntil(() => Promise.resolve(condition() ? true : undefined), 5_000, what);
}

describe('statements on connections that fail under them', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;

  beforeAll(async () => {
    db = await createTestDatabase('conn_failures');
    proxy = await startTcpProxyTo(db.url);
  });

  afterAll(async () => {
    await proxy.close();
    await db.drop();
  });

  it('a write batch on a connection gone silent rejects within the timeout, and later writes go through a healthy one', async () => {
    // Short, yet long enough for the healthy statements of a busy test machine.
    const statementTimeoutMs = 2_000;
    const pool = createPgPool(proxy.via(db.url), { applicationName: 'loopfleet-test-silent', maxConnections: 4, statementTimeoutMs });
    // Batching as a worker's: two statements at once, a second whenever a write waits.
    const store = new PostgresSessionStore(pool, { batch: { maxSize: 64, maxInFlight: 2, overlapMinWaiting: 1 } });
    try {
      // Two idle connections, both of which then go silent: the partition after the pool opened them.
      await Promise.all([pool.query('SELECT 1'), pool.query('SELECT 1')]);
      expect([pool.totalCount, pool.idleCount]).toEqual([2, 2]);
      expect(proxy.silenceOpen()).toBe(2);

      const [first, second, later] = [sessionId('silent-a'), sessionId('silent-b'), sessionId('later')];
      const started = Date.now();
      // One batch on each silent connection: both batch slots taken.
      const stuck = [settled(store.acceptInput(send(first)))];
      await waitFor(() => pool.idleCount === 1, 'the first batch to take a connection');
      stuck.push(settled(store.acceptInput(send(second))));
      await waitFor(() => pool.idleCount === 0, 'the second batch to take the other');
      // This one waits for a slot, as every write did, forever, before the timeouts.
      const queued = settled(store.acceptInput(send(later)));

      const outcomes = await within(Promise.all(stuck), 30_000, 'the batches on silent connections');
      const elapsed = Date.now() - started;
      for (const outcome of outcomes) {
        // No answer at all: the client's timeout, not a server error — the outcome is unknown.
        expect(outcome).toEqual({ error: expect.objectContaining({ message: expect.stringMatching(/timeout/i) }) });
        expect((outcome as { error: unknown }).error).not.toBeInstanceOf(pg.DatabaseError);
      }
      expect(elapsed).toBeGreaterThanOrEqual(statementTimeoutMs);

      // The slot freed, the queued write went out on a new connection and committed.
      expect(await within(queued, 10_000, 'the queued write')).toEqual({ value: expect.objectContaining({ seq: 1, duplicate: false }) });
      // The silent connections were discarded (their sockets closed), not handed out again.
      await waitFor(() => proxy.silenced() === 0, 'the silent connections to be closed');
      // The proxy dropped what was sent on them: nothing was written, and the writes can be made again.
      expect(await countRows(pool, 'session_inputs', first)).toBe(0);
      expect(await store.acceptInput(send(first))).toMatchObject({ seq: 1, duplicate: false });
      expect(await store.acceptInput(send(second))).toMatchObject({ seq: 1, duplicate: false });
    } finally {
      // Bounded: a connection never given up stays checked out, and end() would wait for it forever.
      await within(pool.end(), 5_000, 'ending the pool');
    }
  });

  it('the server cancels a statement past the statement timeout (an error response), and the connection stays usable', async () => {
    const pool = createPgPool(db.url, { applicationName: 'loopfleet-test-statement-timeout', maxConnections: 1, statementTimeoutMs: 500 });
    try {
      expect((await pool.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]?.statement_timeout).toBe('500ms');
      let pid = 0;
      const error = await within(
        withConnection(
          pool,
          async (client) => {
            pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
            return client.query('SELECT pg_sleep(5)');
          },
          isStatementError,
        ),
        4_000,
        'pg_sleep(5)',
      ).catch((caught: unknown) => caught);
      // 57014 query_canceled, "canceling statement due to statement timeout": before the client's own timeout.
      expect(error).toBeInstanceOf(pg.DatabaseError);
      expect(error).toMatchObject({ code: '57014', severity: 'ERROR' });
      const again = await withConnection(pool, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      expect(again).toBe(pid);
    } finally {
      await pool.end();
    }
  });

  it('a batch whose backend is terminated (FATAL) is sent again row by row on other connections: every row commits', async () => {
    const applicationName = 'loopfleet-test-terminated';
    const pool = createPgPool(db.url, { applicationName, maxConnections: 4 });
    const store = new PostgresSessionStore(pool);
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      const ids = [sessionId('fatal-a'), sessionId('fatal-b'), sessionId('fatal-c')];
      await store.createSession({ id: ids[1]! });
      // Hold one session's row lock, so the batched accept waits on it (and can be found).
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [ids[1]]);

      // Submitted in one turn: one statement for all three.
      const accepts = ids.map((id) => settled(store.acceptInput(send(id))));
      const pid = await pollUntil(
        async () =>
          (
            await blocker.query<{ pid: number }>(
              `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
              [applicationName],
            )
          ).rows[0]?.pid,
        5_000,
        'the batch to wait on the row lock',
      );
      expect((await blocker.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid])).rows[0]?.ok).toBe(true);
      await blocker.query('ROLLBACK');

      const outcomes = await within(Promise.all(accepts), 10_000, 'the accepts');
      // The terminated statement rolled back; each row, sent again alone on a live connection, committed.
      expect(outcomes).toEqual(ids.map((id) => ({ value: expect.objectContaining({ sessionId: id, seq: 1, duplicate: false }) })));
      for (const id of ids) expect(await countRows(pool, 'session_inputs', id)).toBe(1);
    } finally {
      await blocker.end();
      await pool.end();
    }
  });
});
