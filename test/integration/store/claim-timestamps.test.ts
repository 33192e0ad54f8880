import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InputRecord } from '../../../src/core/session-types.js';
import { backendsWaitingOnLocks, leasedSession, openStoreFixture, pollUntil, sessionId, type StoreFixture } from './store-fixture.js';

/**
 * Timestamps in commit order (I2): an input is claimed after it was accepted, so its
 * `started_at` must never precede its `accepted_at`. Accept stamps `accepted_at` with the clock under
 * the session lock; a claim whose transaction began before that accept committed (it waited for the
 * lock) must not stamp its own transaction's start time.
 */
describe('claim timestamps', () => {
  const APPLICATION = 'loopfleet-test-claim-ts';
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('claim_ts', { applicationName: APPLICATION, maxConnections: 12 });
  });

  afterAll(async () => {
    await fx.close();
  });

  function accept(id: string, text: string) {
    return fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text }, maxBytes: 1000 });
  }

  /** Inputs of these sessions whose start precedes their acceptance, compared at microsecond precision. */
  async function inversions(ids: string[]): Promise<number> {
    const result = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM session_inputs
        WHERE session_id = ANY($1::text[]) AND started_at < accepted_at`,
      [ids],
    );
    return result.rows[0]?.n ?? -1;
  }

  /** Backends of the store's pool waiting on a lock. */
  const waitingOnLocks = () => backendsWaitingOnLocks(fx.pool, APPLICATION);

  it('stamps started_at after accepted_at when the claim waited for the lock an accept held (forced order)', async () => {
    const ids: string[] = [];
    const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
    await blocker.connect();
    try {
      for (let i = 0; i < 5; i += 1) {
        const id = sessionId('forced');
        ids.push(id);
        const token = await leasedSession(fx.store, id);
        await accept(id, `first ${i}`);
        // Hold the session lock, queue an accept behind it, then a claim behind the accept. The claim
        // sees input 1 open, so it waits for the row (its fence) and claims 1 once it has it.
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [id]);
        const accepted = accept(id, `forced ${i}`);
        await pollUntil(async () => ((await waitingOnLocks()) >= 1 ? true : undefined), 5_000, 'the accept to wait');
        const claimed = fx.store.claimNextInput({ sessionId: id, leaseToken: token });
        await pollUntil(async () => ((await waitingOnLocks()) >= 2 ? true : undefined), 5_000, 'the claim to wait');
        await blocker.query('COMMIT');
        expect((await accepted).seq).toBe(2);
        const claim = await claimed;
        expect(claim?.input.seq).toBe(1);
        const input = claim?.input as InputRecord;
        expect(input.startedAt?.getTime()).toBeGreaterThanOrEqual(input.acceptedAt.getTime());
      }
      expect(await inversions(ids)).toBe(0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      await blocker.end();
    }
  });

  it('leaves an input accepted while a claim runs to the next claim, without waiting for it', async () => {
    const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
    await blocker.connect();
    try {
      const id = sessionId('empty');
      const token = await leasedSession(fx.store, id);
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [id]);
      const accepted = accept(id, 'while claiming');
      await pollUntil(async () => ((await waitingOnLocks()) >= 1 ? true : undefined), 5_000, 'the accept to wait');
      // Nothing is open in the claim's snapshot: it neither waits nor writes, and reports an empty inbox.
      expect(await fx.store.claimNextInput({ sessionId: id, leaseToken: token })).toBeNull();
      await blocker.query('COMMIT');
      expect((await accepted).seq).toBe(1);
      const claim = await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
      expect(claim?.input.seq).toBe(1);
      expect(claim!.input.startedAt!.getTime()).toBeGreaterThanOrEqual(claim!.input.acceptedAt.getTime());
      expect(await inversions([id])).toBe(0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      await blocker.end();
    }
  });

  it('never stamps a claimed input as started before it was accepted, over 100 races of accepts and claims', async () => {
    const ids: string[] = [];
    let racedClaims = 0;
    for (let i = 0; i < 100; i += 1) {
      const id = sessionId('race');
      ids.push(id);
      const token = await leasedSession(fx.store, id);
      const claim = () => fx.store.claimNextInput({ sessionId: id, leaseToken: token });
      let raced: Awaited<ReturnType<typeof claim>>;
      if (i % 2 === 0) {
        // Two accepts and a claim at once, on an empty inbox: the claim finds nothing, one input or both.
        [, , raced] = await Promise.all([accept(id, 'a'), accept(id, 'b'), claim()]);
      } else {
        // One input settled, a second accepted while the claim runs: the claim takes the first, often
        // after waiting for the session row the second accept holds.
        await accept(id, 'a');
        [, raced] = await Promise.all([accept(id, 'b'), claim()]);
        expect(raced?.input.seq).toBe(1);
        racedClaims += 1;
      }
      // Then every input, raced or not, is claimed and finished.
      for (let next = raced ?? (await claim()); next !== null; next = await claim()) {
        const input = next.input;
        expect(input.startedAt?.getTime()).toBeGreaterThanOrEqual(input.acceptedAt.getTime());
        await fx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: input.seq, status: 'done' } });
      }
    }
    // Microsecond precision, in the database: no input of any of these sessions started before it was accepted.
    expect(await inversions(ids)).toBe(0);
    const claimed = await fx.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM session_inputs WHERE session_id = ANY($1::text[]) AND started_at IS NOT NULL', [ids]);
    expect(claimed.rows[0]?.n).toBe(200);
    // Half the claims ran while an accept was in flight on the same session.
    expect(racedClaims).toBe(50);
  });

  it('stamps a steered input after its acceptance when the step waited for the lock its accept held (forced order)', async () => {
    const ids: string[] = [];
    const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
    await blocker.connect();
    try {
      for (let i = 0; i < 5; i += 1) {
        const id = sessionId('steer');
        ids.push(id);
        const token = await leasedSession(fx.store, id);
        await accept(id, 'main');
        await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
        // Behind a held lock: an accept (it becomes seq 2), then a step that steers seq 2 into the
        // running input and finishes it. The step's transaction starts before the accept commits.
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [id]);
        const accepted = accept(id, `steer ${i}`);
        await pollUntil(async () => ((await waitingOnLocks()) >= 1 ? true : undefined), 5_000, 'the accept to wait');
        const step = fx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [2], intoInputSeq: 1 }, input: { seq: 1, status: 'done' } });
        await pollUntil(async () => ((await waitingOnLocks()) >= 2 ? true : undefined), 5_000, 'the step to wait');
        await blocker.query('COMMIT');
        expect((await accepted).seq).toBe(2);
        await step;
        const steered = await fx.store.getInput(id, 2);
        expect(steered).toMatchObject({ status: 'done', steeredInto: 1 });
        expect(steered?.startedAt?.getTime()).toBeGreaterThanOrEqual(steered?.acceptedAt.getTime() ?? Infinity);
      }
      const result = await fx.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM session_inputs
          WHERE session_id = ANY($1::text[]) AND (started_at < accepted_at OR finished_at < started_at)`,
        [ids],
      );
      expect(result.rows[0]?.n).toBe(0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      await blocker.end();
    }
  });
});
