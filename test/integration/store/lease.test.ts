import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistant, backendsWaitingOnLocks, countRows, leasedSession, openStoreFixture, pollUntil, sessionCounters, sessionId, user, type StoreFixture } from './store-fixture.js';

describe('lease and fence', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('lease', { maxConnections: 15 });
  });

  afterAll(async () => {
    await fx.close();
  });

  it('gives a positive token on a free session, then refuses others while it is live', async () => {
    const id = sessionId('live');
    await fx.store.createSession({ id });
    const first = await fx.store.acquireLease({ sessionId: id, owner: 'worker-a', ttlMs: 30_000 });
    if (!first.acquired) throw new Error('expected the lease');
    expect(first.token).toBeGreaterThan(0);
    const second = await fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 30_000 });
    expect(second).toMatchObject({ acquired: false, holder: 'worker-a' });
    if (second.acquired) throw new Error('unreachable');
    expect(second.retryAfterMs).toBeGreaterThan(0);
    expect(second.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(await fx.store.getSession(id)).toMatchObject({ lease: { owner: 'worker-a', token: first.token } });
  });

  it('a takeover never starts again an input its lapsed holder ended while the takeover waited for the row (I3, I6)', async () => {
    const id = sessionId('resurrect');
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'hi' }, maxBytes: 10_000 });
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'then this' }, maxBytes: 10_000 });
    const first = await fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'h1', ttlMs: 60_000 });
    if (!first.acquired) throw new Error('expected the lease');
    expect(first.claimed?.input.seq).toBe(1);
    // The holder's lease lapses; it is about to commit input 1's end all the same (its token is current).
    await fx.pool.query("UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [id]);
    const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 2, llmCalls: 1, costUsd: 0, costPicoUsd: 0 };
    const finish = fx.store.commitStep({
      sessionId: id,
      leaseToken: first.token,
      messages: [{ inputSeq: 1, round: 0, message: assistant('answer') }],
      input: { seq: 1, status: 'done', result: { status: 'completed', finalText: 'answer', rounds: 1, toolCalls: 0, usage } },
    });
    const waiting = (n: number) => async () => ((await backendsWaitingOnLocks(fx.pool, 'loopfleet-test-lease')) >= n ? true : undefined);
    await pollUntil(waiting(1), 10_000, "the holder's end queued behind the row lock");
    // A new drain starts while the end waits: its snapshot sees input 1 running.
    const takeover = fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'w2', ttlMs: 60_000 });
    await pollUntil(waiting(2), 10_000, 'the takeover queued behind it');
    await blocker.query('COMMIT');
    await blocker.end();
    await finish;
    const second = await takeover;
    if (!second.acquired) throw new Error('expected the lapsed lease to be taken');
    // Input 1 stays ended, started once. Its input_finished may be unpublished, so the takeover
    // claims nothing: input 2 waits, not started, for the claim its drain makes after the repair.
    expect(second).toMatchObject({ finishesOwed: true, claimed: undefined });
    expect(await fx.store.getInput(id, 1)).toMatchObject({ status: 'done', attempts: 1, result: { finalText: 'answer' } });
    expect(await fx.store.getInput(id, 2)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await fx.store.claimNextInput({ sessionId: id, leaseToken: second.token })).toMatchObject({ input: { seq: 2, attempts: 1 }, resumed: false });
    expect((await fx.store.getSession(id))?.stats.inputs).toBe(1);
  });

  it('a takeover whose snapshot saw an input ended meanwhile leaves the claim to its caller, with the token: a claim that fails then is released, not held until the lease lapses', async () => {
    const id = sessionId('reclaim');
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'hi' }, maxBytes: 10_000 });
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'then this' }, maxBytes: 10_000 });
    const first = await fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'h1', ttlMs: 60_000 });
    if (!first.acquired) throw new Error('expected the lease');
    expect(first).toMatchObject({ finishesOwed: false, claimed: { input: { seq: 1 } } });
    await fx.pool.query("UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    // The claim of input 2 fails (a server error, injected).
    await fx.pool.query(`CREATE OR REPLACE FUNCTION test_refuse_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'claim refused (injected)'; END $$`);
    await fx.pool.query(
      `CREATE TRIGGER test_refuse_claim BEFORE UPDATE ON session_inputs FOR EACH ROW
         WHEN (NEW.session_id = '${id}' AND NEW.seq = 2 AND NEW.status = 'running') EXECUTE FUNCTION test_refuse_claim()`,
    );
    try {
      // While the takeover waits for the row, input 1 is ended and the lapsed holder's release says
      // its finish is out (as one transaction here): the takeover's snapshot still sees it running.
      const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [id]);
      await blocker.query("UPDATE session_inputs SET status = 'done', finished_at = now() WHERE session_id = $1 AND seq = 1", [id]);
      await blocker.query('UPDATE sessions SET stat_inputs = stat_inputs + 1, finishes_owed = false, lease_owner = NULL, lease_expires_at = NULL WHERE id = $1', [id]);
      const takeover = fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'w2', ttlMs: 60_000 });
      await pollUntil(async () => ((await backendsWaitingOnLocks(fx.pool, 'loopfleet-test-lease')) >= 1 ? true : undefined), 10_000, 'the takeover queued behind the row lock');
      await blocker.query('COMMIT');
      await blocker.end();
      // The lease is taken, nothing claimed: what is open now is the caller's to claim, under the token.
      const second = await takeover;
      if (!second.acquired) throw new Error('expected the lease');
      expect(second).toMatchObject({ finishesOwed: false, claimed: undefined });
      await expect(fx.store.claimNextInput({ sessionId: id, leaseToken: second.token })).rejects.toThrow(/claim refused/);
      // The caller (a drain, on its way out) releases the lease it holds: the session is free at once.
      expect(await fx.store.releaseLease({ sessionId: id, token: second.token, finishesPublished: true })).toBe(true);
      expect(await fx.store.getSession(id)).toMatchObject({ lease: { owner: null, expiresAt: null, token: second.token } });
      expect(await fx.store.getInput(id, 2)).toMatchObject({ status: 'pending', attempts: 0 });
    } finally {
      await fx.pool.query('DROP TRIGGER IF EXISTS test_refuse_claim ON session_inputs');
    }
  });

  it('refuses a lease on a session that does not exist with session.not_found', async () => {
    await expect(fx.store.acquireLease({ sessionId: sessionId('ghost'), owner: 'w', ttlMs: 1000 })).rejects.toMatchObject({
      code: 'session.not_found',
    });
  });

  it('lets exactly one of 10 racing workers win, holding the session\'s current token', async () => {
    const id = sessionId('race');
    await fx.store.createSession({ id });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => fx.store.acquireLease({ sessionId: id, owner: `worker-${i}`, ttlMs: 30_000 })),
    );
    const winners = results.flatMap((result, i) => (result.acquired ? [{ i, token: result.token }] : []));
    expect(winners).toHaveLength(1);
    expect(winners[0]?.token).toBeGreaterThan(0);
    const counters = await sessionCounters(fx.pool, id);
    expect(counters).toMatchObject({ leaseToken: winners[0]?.token, leaseOwner: `worker-${winners[0]?.i}` });
  });

  it('extends a live lease on renew', async () => {
    const id = sessionId('renew');
    await fx.store.createSession({ id });
    const lease = await fx.store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 1_000 });
    if (!lease.acquired) throw new Error('expected the lease');
    const renewed = await fx.store.renewLease({ sessionId: id, token: lease.token, ttlMs: 60_000 });
    expect(renewed.getTime()).toBeGreaterThan(lease.expiresAt.getTime() + 50_000);
    expect((await fx.store.getSession(id))?.lease.expiresAt?.getTime()).toBe(renewed.getTime());
  });

  it('hands a lapsed lease to a new holder with a greater token and fences the old one out', async () => {
    const id = sessionId('takeover');
    await fx.store.createSession({ id });
    const old = await fx.store.acquireLease({ sessionId: id, owner: 'zombie', ttlMs: 200 });
    if (!old.acquired) throw new Error('expected the lease');
    await fx.store.commitStep({ sessionId: id, leaseToken: old.token, messages: [{ inputSeq: null, round: null, message: user('one') }] });

    const taken = await pollUntil(
      async () => {
        const attempt = await fx.store.acquireLease({ sessionId: id, owner: 'rescuer', ttlMs: 60_000 });
        return attempt.acquired ? attempt : undefined;
      },
      10_000,
      'the lease to lapse',
    );
    expect(taken.token).toBeGreaterThan(old.token);

    const before = await sessionCounters(fx.pool, id);
    await expect(
      fx.store.commitStep({
        sessionId: id,
        leaseToken: old.token,
        messages: [{ inputSeq: null, round: null, message: assistant('from the grave') }],
        pending: null,
      }),
    ).rejects.toMatchObject({ code: 'lease.lost' });
    expect(await countRows(fx.pool, 'messages', id)).toBe(1);
    expect((await sessionCounters(fx.pool, id))?.nextMessageSeq).toBe(before?.nextMessageSeq);

    await expect(fx.store.renewLease({ sessionId: id, token: old.token, ttlMs: 60_000 })).rejects.toMatchObject({
      code: 'lease.lost',
    });
    expect(await fx.store.releaseLease({ sessionId: id, token: old.token })).toBe(false);
    const after = await fx.store.getSession(id);
    expect(after?.lease).toMatchObject({ owner: 'rescuer', token: taken.token });
    expect(after?.lease.expiresAt?.getTime()).toBe(taken.expiresAt.getTime());

    const step = await fx.store.commitStep({
      sessionId: id,
      leaseToken: taken.token,
      messages: [{ inputSeq: null, round: null, message: assistant('alive') }],
    });
    expect(step.messageSeqs).toEqual([2]);
  });

  it('still accepts writes from a lapsed lease nobody took over (the token did not change)', async () => {
    const id = sessionId('lapsed');
    await fx.store.createSession({ id });
    const lease = await fx.store.acquireLease({ sessionId: id, owner: 'slow', ttlMs: 1 });
    if (!lease.acquired) throw new Error('expected the lease');
    // Lapsed on the database clock, the one the lease is measured on.
    await pollUntil(
      async () => {
        const lapsed = await fx.pool.query<{ lapsed: boolean }>('SELECT lease_expires_at <= now() AS lapsed FROM sessions WHERE id = $1', [id]);
        return lapsed.rows[0]?.lapsed === true ? true : undefined;
      },
      5_000,
      'the lease to lapse',
    );
    const step = await fx.store.commitStep({ sessionId: id, leaseToken: lease.token, messages: [{ inputSeq: null, round: null, message: user('late') }] });
    expect(step.messageSeqs).toEqual([1]);
  });

  it('frees the lease on release for the next holder, and a released lease cannot be renewed', async () => {
    const id = sessionId('release');
    await fx.store.createSession({ id });
    const lease = await fx.store.acquireLease({ sessionId: id, owner: 'a', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('expected the lease');
    expect(await fx.store.releaseLease({ sessionId: id, token: lease.token })).toBe(true);
    expect(await fx.store.releaseLease({ sessionId: id, token: lease.token })).toBe(false);
    await expect(fx.store.renewLease({ sessionId: id, token: lease.token, ttlMs: 60_000 })).rejects.toMatchObject({
      code: 'lease.lost',
    });
    expect((await fx.store.getSession(id))?.lease).toEqual({ owner: null, token: lease.token, expiresAt: null });
    const next = await fx.store.acquireLease({ sessionId: id, owner: 'b', ttlMs: 60_000 });
    if (!next.acquired) throw new Error('expected the lease');
    expect(next.token).toBeGreaterThan(lease.token);
  });

  it('draws tokens from lease_token_seq: a deleted and re-created session never gets an old token back', async () => {
    const id = sessionId('reborn');
    const first = await leasedSession(fx.store, id);
    expect(await fx.store.deleteSession(id)).toEqual({ leaseToken: expect.any(Number), descendants: [] });
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'again' }, maxBytes: 1000 });
    expect((await sessionCounters(fx.pool, id))?.leaseToken).toBe(0);
    const second = await fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
    if (!second.acquired) throw new Error('expected the lease');
    expect(second.token).toBeGreaterThan(first);
    // The zombie of the old session is fenced out of the new one.
    await expect(fx.store.claimNextInput({ sessionId: id, leaseToken: first })).rejects.toMatchObject({ code: 'lease.lost' });
    expect((await fx.store.getInput(id, 1))?.status).toBe('pending');
    const seq = await fx.pool.query<{ last: number }>('SELECT last_value AS last FROM lease_token_seq');
    expect(seq.rows[0]?.last).toBeGreaterThanOrEqual(second.token);
  });

  it('keeps one session\'s tokens strictly increasing while 8 workers fight over it (acquire, write, release)', async () => {
    const id = sessionId('contended');
    await fx.store.createSession({ id });
    const rounds = 15;
    // Each worker takes the lease when it can and, while it holds it, appends a message naming its
    // token (fenced, so only the current holder can). The history is then the order of holders.
    const worker = async (w: number): Promise<number[]> => {
      const mine: number[] = [];
      while (mine.length < rounds) {
        const lease = await fx.store.acquireLease({ sessionId: id, owner: `worker-${w}`, ttlMs: 30_000 });
        if (!lease.acquired) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        mine.push(lease.token);
        await fx.store.commitStep({
          sessionId: id,
          leaseToken: lease.token,
          messages: [{ inputSeq: null, round: null, message: user(String(lease.token)) }],
        });
        expect(await fx.store.releaseLease({ sessionId: id, token: lease.token })).toBe(true);
      }
      return mine;
    };
    const perWorker = await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    const inHistoryOrder = (await fx.store.loadHistory(id)).map((m) => Number(m.message.content));
    expect(inHistoryOrder).toHaveLength(8 * rounds);
    expect(inHistoryOrder).toEqual([...inHistoryOrder].sort((a, b) => a - b));
    expect(new Set(inHistoryOrder).size).toBe(inHistoryOrder.length);
    expect([...inHistoryOrder].sort((a, b) => a - b)).toEqual(perWorker.flat().sort((a, b) => a - b));
  });

  it('refuses a nonsensical ttl or token with input.invalid', async () => {
    const id = sessionId('args');
    await fx.store.createSession({ id });
    await expect(fx.store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 0 })).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(fx.store.acquireLease({ sessionId: id, owner: '', ttlMs: 1000 })).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(fx.store.renewLease({ sessionId: id, token: 0, ttlMs: 1000 })).rejects.toMatchObject({ code: 'input.invalid' });
    expect((await fx.store.getSession(id))?.lease.token).toBe(0);
  });
});
