import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCEPT_INPUTS } from '../../../src/store/inbox/accept-input-sql.js';
import { backendsWaitingOnLocks, leasedSession, openStoreFixture, pollUntil, runningSession, type StoreFixture } from './store-fixture.js';

/** Postgres's SQLSTATE for a transaction it aborted to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';

/**
 * Every statement any `pg.Client` sent while `work` ran, and the SQLSTATE of every one that failed.
 * The store retries the rows of a failed batch one by one, so a deadlock would not surface as an error
 * of the call: it is seen here.
 */
async function watchQueries(work: () => Promise<void>): Promise<{ sent: unknown[]; failedCodes: string[] }> {
  const sent: unknown[] = [];
  const failedCodes: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    sent.push(args[0]);
    const result = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) result.catch((error: unknown) => void failedCodes.push(String((error as { code?: unknown }).code)));
    return result;
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
  return { sent, failedCodes };
}

/**
 * Batched statements lock `sessions` rows in session id order (src/store/fencing/lock-sessions-sql.ts), so a
 * producer's accepts and a worker's batch sharing sessions never deadlock. On a table of a few
 * hundred sessions the UPDATEs are planned as hash joins over a sequential scan, which visit rows in
 * heap order; the sessions here are created in reverse id order, so heap order is the opposite of
 * id order and a batch that locked as it visited would take B before A.
 *
 * Each case forces the interleaving that deadlocked (Postgres broke it after `deadlock_timeout`, 1 s,
 * failing one statement): an accept batch for [A, B] — played as two accepts in one transaction, so
 * the test decides when the second lock is asked for — holds A; the store's batch for [A, B] is sent
 * and waits for A; then the accept asks for B. Locking in id order the batch holds nothing while it
 * waits for A, so B is free, the accept commits, and the batch applies to both sessions.
 */
describe('batched statements lock sessions in id order', () => {
  const APPLICATION = 'loopfleet-test-lock-order';
  /** Enough sessions that the planner scans the table instead of probing its index per row. */
  const FILLER_SESSIONS = 800;
  let fx: StoreFixture;
  let accepter: pg.Client;
  let round = 0;

  beforeAll(async () => {
    fx = await openStoreFixture('lock_order', { applicationName: APPLICATION, maxConnections: 4 });
    await fx.pool.query(`INSERT INTO sessions (id) SELECT 'filler-' || g FROM generate_series(1, ${FILLER_SESSIONS}) AS g`);
    accepter = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-accepter' });
    await accepter.connect();
  });

  afterAll(async () => {
    await accepter?.end();
    await fx.close();
  });

  /**
   * Two sessions, A < B bytewise, of which B is created first (so it comes first in the heap).
   * `create` makes one from a label and returns its id (which starts with the label).
   */
  async function pair(create: (label: string) => Promise<string>): Promise<[string, string]> {
    round += 1;
    const b = await create(`lock-${round}-b`);
    const a = await create(`lock-${round}-a`);
    await fx.pool.query('ANALYZE sessions');
    return [a, b];
  }

  /** One accept on the accepter's open transaction: holds the session row until COMMIT. */
  async function acceptInOpenTransaction(id: string): Promise<void> {
    const record = { session_id: id, input_id: `held-${id}`, kind: 'send', mode: 'queue', payload: { text: 'held' }, origin_job_id: null };
    await accepter.query({ text: ACCEPT_INPUTS.text, values: [JSON.stringify([record])] });
  }

  /** Backends of the store's pool waiting on a lock. */
  const storeWaitingOnLocks = () => backendsWaitingOnLocks(fx.pool, APPLICATION);

  /**
   * Plays the interleaving: the accepter holds A, `batch` is sent and waits, the accepter takes B and
   * commits. Resolves with what the batch returned, once it checked that no statement failed on a
   * deadlock, and that the store sent both sessions in one statement (two statements could not
   * deadlock, and would prove nothing).
   */
  async function interleave<T>(a: string, b: string, batch: () => Promise<T>): Promise<T> {
    let value: T | undefined;
    const { sent, failedCodes } = await watchQueries(async () => {
      await accepter.query('BEGIN');
      try {
        await acceptInOpenTransaction(a);
        // Settled either way before anything else is awaited, so a failure is reported, not left unhandled.
        const outcome = batch().then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        await pollUntil(async () => ((await storeWaitingOnLocks()) >= 1 ? true : undefined), 10_000, 'the batch to wait for session A');
        await acceptInOpenTransaction(b);
        await accepter.query('COMMIT');
        const settled = await outcome;
        if ('error' in settled) throw settled.error;
        value = settled.result;
      } catch (error) {
        await accepter.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
    const together = sent.some((query) => {
      const values = (query as { name?: string; values?: unknown[] }).values;
      const name = (query as { name?: string }).name ?? '';
      if (!name.startsWith('loopfleet_') || typeof values?.[0] !== 'string') return false;
      const text = values[0];
      return text.includes(`"${a}"`) && text.includes(`"${b}"`);
    });
    expect(together).toBe(true);
    expect(failedCodes.filter((code) => code === DEADLOCK_DETECTED)).toEqual([]);
    return value as T;
  }

  /** Both sessions' held accepts committed: each has the input the accepter added. */
  async function heldAccepts(ids: string[]): Promise<number> {
    const result = await fx.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM session_inputs WHERE session_id = ANY($1::text[]) AND input_id LIKE 'held-%'`, [ids]);
    return result.rows[0]?.n ?? 0;
  }

  it('a batch of steps waits for a session an accept holds without holding the other', async () => {
    const tokens = new Map<string, number>();
    const [a, b] = await pair(async (label) => {
      const running = await runningSession(fx.store, label);
      tokens.set(running.id, running.token);
      return running.id;
    });
    const step = (id: string) => fx.store.commitStep({ sessionId: id, leaseToken: tokens.get(id)!, messages: [{ inputSeq: 1, round: 1, message: { role: 'assistant', content: `reply of ${id}` } }] });
    const results = await interleave(a, b, () => Promise.all([step(a), step(b)]));
    expect(results).toHaveLength(2);
    expect(await heldAccepts([a, b])).toBe(2);
  });

  it('a batch of next claims does the same', async () => {
    const tokens = new Map<string, number>();
    const [a, b] = await pair(async (id) => {
      tokens.set(id, await leasedSession(fx.store, id));
      await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'first' }, maxBytes: 10_000 });
      return id;
    });
    const claims = await interleave(a, b, () => Promise.all([a, b].map((id) => fx.store.claimNextInput({ sessionId: id, leaseToken: tokens.get(id)! }))));
    expect(claims.map((claim) => claim?.input.seq)).toEqual([1, 1]);
    expect(await heldAccepts([a, b])).toBe(2);
  });

  it('a batch of leases-and-claims does the same', async () => {
    const [a, b] = await pair(async (id) => {
      await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'first' }, maxBytes: 10_000 });
      return id;
    });
    const leases = await interleave(a, b, () => Promise.all([a, b].map((id) => fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 }))));
    expect(leases.map((lease) => lease.acquired)).toEqual([true, true]);
    expect(await heldAccepts([a, b])).toBe(2);
  });

  it('a batch of lease releases does the same', async () => {
    const tokens = new Map<string, number>();
    const [a, b] = await pair(async (id) => {
      tokens.set(id, await leasedSession(fx.store, id));
      return id;
    });
    const released = await interleave(a, b, () => Promise.all([a, b].map((id) => fx.store.releaseLease({ sessionId: id, token: tokens.get(id)! }))));
    expect(released).toEqual([true, true]);
    expect(await heldAccepts([a, b])).toBe(2);
  });
});
