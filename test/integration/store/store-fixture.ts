import pg from 'pg';
import type { Message } from '../../../src/core/messages.js';
import { createPgPool, type PgPoolOptions } from '../../../src/store/postgres/pool.js';
import { PostgresSessionStore, type PostgresSessionStoreOptions } from '../../../src/store/postgres-session-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

/** One test file's private database, a pool on it and the store under test. */
export interface StoreFixture {
  db: TestDatabase;
  pool: pg.Pool;
  store: PostgresSessionStore;
  /** Ends the pool, then drops the database. Call from afterAll. */
  close(): Promise<void>;
}

export async function openStoreFixture(label: string, options: PgPoolOptions = {}, storeOptions: PostgresSessionStoreOptions = {}): Promise<StoreFixture> {
  const db = await createTestDatabase(label);
  const pool = createPgPool(db.url, { applicationName: `loopfleet-test-${label}`, ...options });
  return {
    db,
    pool,
    store: new PostgresSessionStore(pool, storeOptions),
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
}

/** Rows of `table` belonging to a session (`sessions` is keyed by `id`, the rest by `session_id`). */
export async function countRows(pool: pg.Pool, table: string, sessionId: string): Promise<number> {
  const column = table === 'sessions' ? 'id' : 'session_id';
  const result = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [sessionId]);
  return result.rows[0]?.n ?? 0;
}

/** The raw session row columns the fence tests look at. */
export async function sessionCounters(
  pool: pg.Pool,
  sessionId: string,
): Promise<{ nextSeq: number; nextMessageSeq: number; leaseToken: number; leaseOwner: string | null } | undefined> {
  const result = await pool.query<{ nextSeq: number; nextMessageSeq: number; leaseToken: number; leaseOwner: string | null }>(
    `SELECT next_seq AS "nextSeq", next_message_seq AS "nextMessageSeq", lease_token AS "leaseToken",
            lease_owner AS "leaseOwner" FROM sessions WHERE id = $1`,
    [sessionId],
  );
  return result.rows[0];
}

/** Polls `attempt` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function pollUntil<T>(attempt: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Backends of this database with `applicationName` waiting on a lock (a statement queued behind a row lock). */
export async function backendsWaitingOnLocks(pool: pg.Pool, applicationName: string): Promise<number> {
  const result = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
    [applicationName],
  );
  return result.rows[0]?.n ?? 0;
}

/** A unique session id for one test. */
export function sessionId(label: string): string {
  return `${label}-${Math.random().toString(36).slice(2, 10)}`;
}

export function user(text: string): Message {
  return { role: 'user', content: text };
}

export function assistant(text: string): Message {
  return { role: 'assistant', content: text };
}

/** Creates a session and takes its lease; returns the token. */
export async function leasedSession(store: PostgresSessionStore, id: string, owner = 'worker-a'): Promise<number> {
  await store.createSession({ id });
  const lease = await store.acquireLease({ sessionId: id, owner, ttlMs: 60_000 });
  if (!lease.acquired) throw new Error(`could not lease ${id}`);
  return lease.token;
}

/** The first argument of every `pg.Client#query` call made while `work` runs (the statements sent). */
export async function statementsSent(work: () => Promise<unknown>): Promise<unknown[]> {
  return (await queriesSent(work)).map((query) => query.first);
}

/** Every `pg.Client#query` call made while `work` runs: its text and values, and its first argument as passed. */
export async function queriesSent(work: () => Promise<unknown>): Promise<Array<{ first: unknown; text: string; values: unknown[] }>> {
  const sent: Array<{ first: unknown; text: string; values: unknown[] }> = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
    const text = typeof first === 'string' ? first : first.text;
    sent.push({ first, text, values: typeof first === 'string' ? (second ?? []) : (first.values ?? second ?? []) });
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

/**
 * Writes a session `id` with `count` messages straight into Postgres (user and assistant in turn,
 * `message <seq>`), the first `folded` of them compacted away.
 */
export async function seedLongHistory(fx: StoreFixture, id: string, count: number, folded: number): Promise<void> {
  await fx.store.createSession({ id });
  await fx.pool.query(
    `INSERT INTO messages (session_id, seq, role, content, state)
     SELECT $1, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, to_jsonb('message ' || g),
            CASE WHEN g <= $3 THEN 'compacted' ELSE 'active' END
       FROM generate_series(1, $2::int) AS g`,
    [id, count, folded],
  );
  await fx.pool.query(`UPDATE sessions SET next_message_seq = $2 WHERE id = $1`, [id, count]);
}

/** A leased session whose first input is claimed (running). */
export async function runningSession(store: PostgresSessionStore, label: string): Promise<{ id: string; token: number }> {
  const id = sessionId(label);
  const token = await leasedSession(store, id);
  await store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'hi' }, maxBytes: 10_000 });
  const claimed = await store.claimNextInput({ sessionId: id, leaseToken: token });
  if (claimed?.input.seq !== 1) throw new Error(`expected to claim input 1 of ${id}`);
  return { id, token };
}
