import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepCommit } from '../../../src/core/ports/session-store.js';
import type { InputResult } from '../../../src/core/session-types.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { assistant, countRows, leasedSession, openStoreFixture, runningSession, sessionCounters, sessionId, statementsSent, user, type StoreFixture } from './store-fixture.js';

/**
 * Cross-session group commit (docs/store.md): steps of different sessions submitted at the same
 * moment are written by one statement, each fenced on its own — a refused or failing step is only
 * its own.
 */
describe('commitStep batches steps of different sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('step_batch');
    // A step of a session whose id starts with "boom-" fails on the server, as a constraint would.
    await fx.pool.query(`
      CREATE FUNCTION test_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.session_id LIKE 'boom-%' THEN RAISE EXCEPTION 'boom for %', NEW.session_id; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_boom BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION test_boom();`);
  });

  afterAll(async () => {
    await fx.close();
  });

  const result: InputResult = {
    status: 'completed',
    finalText: 'done',
    rounds: 1,
    toolCalls: 1,
    usage: { promptTokens: 10, completionTokens: 2, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 12, llmCalls: 1, costUsd: 0, costPicoUsd: 0 },
  };

  /** A leased session whose first input is claimed (running). */
  function running(label: string): Promise<{ id: string; token: number }> {
    return runningSession(fx.store, label);
  }

  function finishingStep(id: string, token: number): StepCommit {
    return {
      sessionId: id,
      leaseToken: token,
      messages: [
        { inputSeq: 1, round: 1, message: { role: 'tool', content: 'ok', toolCallId: 'call_1', name: 'noop' } },
        { inputSeq: 1, round: 1, message: assistant(`done ${id}`) },
      ],
      toolCalls: [{ toolCallId: 'call_1', inputSeq: 1, round: 1, name: 'noop', args: {}, status: 'completed', durationMs: 1 }],
      input: { seq: 1, status: 'done', result },
    };
  }

  function messageStep(id: string, token: number, text: string): StepCommit {
    return { sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user(text) }] };
  }

  /** Names of the prepared step statements sent while `work` runs, one entry per statement. */
  async function stepStatementsSent(work: () => Promise<unknown>): Promise<string[]> {
    const names = (await statementsSent(work)).map((config) => (typeof config === 'object' && config !== null ? (config as { name?: unknown }).name : undefined));
    return names.filter((name): name is string => typeof name === 'string' && name.startsWith('loopfleet_commit_step_'));
  }

  async function messageTexts(id: string): Promise<{ seq: number; text: unknown }[]> {
    const rows = await fx.pool.query<{ seq: number; text: unknown }>(`SELECT seq, content AS text FROM messages WHERE session_id = $1 ORDER BY seq`, [id]);
    return rows.rows.map((row) => ({ seq: Number(row.seq), text: row.text }));
  }

  it('writes the finishing steps of 8 sessions submitted together with one statement, each in full', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, (_, i) => running(`together-${i}`)));
    let outcomes: unknown[] = [];
    const sent = await stepStatementsSent(async () => {
      outcomes = await Promise.all(sessions.map(({ id, token }) => fx.store.commitStep(finishingStep(id, token))));
    });
    expect(sent).toEqual(['loopfleet_commit_step_mlf']);
    expect(outcomes).toEqual(sessions.map(() => ({ messageSeqs: [1, 2], pendingInputs: false, pendingSteers: false })));
    for (const { id } of sessions) {
      expect(await messageTexts(id)).toEqual([
        { seq: 1, text: 'ok' },
        { seq: 2, text: `done ${id}` },
      ]);
      expect(await fx.store.getInput(id, 1)).toMatchObject({ status: 'done', result });
      expect(await fx.store.getSession(id)).toMatchObject({ status: 'idle', nextMessageSeq: 2, stats: { inputs: 1, rounds: 1, toolCalls: 1 } });
      expect(await countRows(fx.pool, 'tool_calls', id)).toBe(1);
    }
  });

  it('refuses a step under a stale token with lease.lost and writes nothing of it, while the steps beside it apply', async () => {
    const sessions = await Promise.all(Array.from({ length: 4 }, (_, i) => running(`stale-${i}`)));
    const stale = sessions[2]!;
    expect(await fx.store.releaseLease({ sessionId: stale.id, token: stale.token })).toBe(true);
    expect(await fx.store.acquireLease({ sessionId: stale.id, owner: 'worker-b', ttlMs: 60_000 })).toMatchObject({ acquired: true });
    const outcomes = await Promise.allSettled(sessions.map(({ id, token }) => fx.store.commitStep(finishingStep(id, token))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'lease.lost' });
    expect(await countRows(fx.pool, 'messages', stale.id)).toBe(0);
    expect(await countRows(fx.pool, 'tool_calls', stale.id)).toBe(0);
    expect(await fx.store.getInput(stale.id, 1)).toMatchObject({ status: 'running', result: null });
    for (const { id } of [sessions[0]!, sessions[1]!, sessions[3]!]) {
      expect(await fx.store.getInput(id, 1)).toMatchObject({ status: 'done' });
      expect(await countRows(fx.pool, 'messages', id)).toBe(2);
    }
  });

  it('refuses a step whose precondition fails with state.conflict, while the steps beside it apply', async () => {
    const sessions = await Promise.all(Array.from({ length: 3 }, (_, i) => running(`conflict-${i}`)));
    // The middle one finishes input 2, which is pending, not running.
    const middle = sessions[1]!;
    await fx.store.acceptInput({ sessionId: middle.id, kind: 'send', payload: { text: 'later' }, maxBytes: 10_000 });
    const steps = sessions.map(({ id, token }) => finishingStep(id, token));
    steps[1] = { ...steps[1]!, input: { seq: 2, status: 'done', result } };
    const outcomes = await Promise.allSettled(steps.map((step) => fx.store.commitStep(step)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'state.conflict' });
    expect(await countRows(fx.pool, 'messages', middle.id)).toBe(0);
    expect(await fx.store.getInput(middle.id, 2)).toMatchObject({ status: 'pending' });
    expect(await countRows(fx.pool, 'messages', sessions[0]!.id)).toBe(2);
    expect(await countRows(fx.pool, 'messages', sessions[2]!.id)).toBe(2);
  });

  it('fails only the step the server fails: the statement is sent again one step each, and the others apply', async () => {
    const ids = [sessionId('ok-a'), sessionId('boom'), sessionId('ok-b')];
    // sessionId() appends a random suffix: the trigger matches the "boom-" prefix.
    const tokens = await Promise.all(ids.map((id) => leasedSession(fx.store, id)));
    let outcomes: PromiseSettledResult<unknown>[] = [];
    const sent = await stepStatementsSent(async () => {
      outcomes = await Promise.allSettled(ids.map((id, i) => fx.store.commitStep(messageStep(id, tokens[i]!, `hello ${i}`))));
    });
    // The batch, then each step alone.
    expect(sent).toEqual(Array.from({ length: 4 }, () => 'loopfleet_commit_step_m'));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const failure = (outcomes[1] as PromiseRejectedResult).reason as Error;
    expect(failure).toBeInstanceOf(pg.DatabaseError);
    expect(failure.message).toBe(`boom for ${ids[1]}`);
    expect(await messageTexts(ids[0]!)).toEqual([{ seq: 1, text: 'hello 0' }]);
    expect(await messageTexts(ids[2]!)).toEqual([{ seq: 1, text: 'hello 2' }]);
    expect(await messageTexts(ids[1]!)).toEqual([]);
    expect(await sessionCounters(fx.pool, ids[1]!)).toMatchObject({ nextMessageSeq: 0 });
  });

  it('keeps every session gapless and complete while 24 sessions run 6 steps each through 2 statements at a time', async () => {
    const store = new PostgresSessionStore(fx.pool, { batch: { maxSize: 8, maxInFlight: 2 } });
    const sessions = await Promise.all(Array.from({ length: 24 }, (_, i) => running(`busy-${i}`)));
    const sent = await stepStatementsSent(() =>
      Promise.all(
        sessions.map(async ({ id, token }) => {
          for (let step = 1; step <= 5; step += 1) {
            expect(await store.commitStep(messageStep(id, token, `step ${step}`))).toEqual({ messageSeqs: [step], pendingInputs: false, pendingSteers: false });
          }
          expect(await store.commitStep(finishingStep(id, token))).toEqual({ messageSeqs: [6, 7], pendingInputs: false, pendingSteers: false });
        }),
      ),
    );
    // 144 steps; batches of up to 8 need at least 18 statements, and batching must have happened.
    expect(sent.length).toBeGreaterThanOrEqual(18);
    expect(sent.length).toBeLessThan(144);
    for (const { id } of sessions) {
      const texts = await messageTexts(id);
      expect(texts.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(texts.slice(0, 5).map((row) => row.text)).toEqual(['step 1', 'step 2', 'step 3', 'step 4', 'step 5']);
      expect(await fx.store.getSession(id)).toMatchObject({ status: 'idle', stats: { inputs: 1 } });
    }
  });

  it('either applies each batched step racing a takeover whole or refuses it with lease.lost, writing nothing', async () => {
    const sessions = await Promise.all(Array.from({ length: 12 }, (_, i) => running(`race-${i}`)));
    // Every other session's lease has lapsed and is taken over while the batch is on its way.
    const raced = sessions.filter((_, i) => i % 2 === 0);
    for (const { id } of raced) await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const [outcomes, leases] = await Promise.all([
      Promise.allSettled(sessions.map(({ id, token }) => fx.store.commitStep(finishingStep(id, token)))),
      Promise.all(raced.map(({ id }) => fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 }))),
    ]);
    expect(leases.every((lease) => lease.acquired)).toBe(true);
    for (const [i, { id }] of sessions.entries()) {
      const outcome = outcomes[i]!;
      const input = await fx.store.getInput(id, 1);
      if (i % 2 === 1) expect(outcome.status).toBe('fulfilled');
      if (outcome.status === 'fulfilled') {
        expect(input).toMatchObject({ status: 'done', result });
        expect(await countRows(fx.pool, 'messages', id)).toBe(2);
      } else {
        expect(outcome.reason).toMatchObject({ code: 'lease.lost' });
        expect(input).toMatchObject({ status: 'running', result: null });
        expect(await countRows(fx.pool, 'messages', id)).toBe(0);
        expect(await countRows(fx.pool, 'tool_calls', id)).toBe(0);
      }
    }
  });
});

describe('releaseLease batches releases of different sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('release_batch');
  });

  afterAll(async () => {
    await fx.close();
  });

  it('frees the leases of 6 sessions released together with one statement; a stale or repeated release is false and frees nothing', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => sessionId(`release-${i}`));
    const tokens = await Promise.all(ids.map((id) => leasedSession(fx.store, id)));
    // The fourth session was taken over: its old token must not free the new holder's lease.
    await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [ids[3]]);
    const takeover = await fx.store.acquireLease({ sessionId: ids[3]!, owner: 'worker-b', ttlMs: 60_000 });
    if (!takeover.acquired) throw new Error('expected the takeover');
    let released: boolean[] = [];
    const sent = await statementsSent(async () => {
      released = await Promise.all(ids.map((id, i) => fx.store.releaseLease({ sessionId: id, token: tokens[i]! })));
    });
    expect(sent).toEqual([expect.objectContaining({ name: 'loopfleet_release_leases' })]);
    expect(released).toEqual([true, true, true, false, true, true]);
    for (const [i, id] of ids.entries()) {
      const lease = await fx.pool.query<{ owner: string | null }>(`SELECT lease_owner AS owner FROM sessions WHERE id = $1`, [id]);
      expect(lease.rows[0]?.owner).toBe(i === 3 ? 'worker-b' : null);
    }
    // Released already: a second release of the same token frees nothing more.
    expect(await fx.store.releaseLease({ sessionId: ids[0]!, token: tokens[0]! })).toBe(false);
    expect(await fx.store.releaseLease({ sessionId: ids[3]!, token: takeover.token })).toBe(true);
  });
});

describe('acceptInput batches accepts of different sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('accept_batch');
  });

  afterAll(async () => {
    await fx.close();
  });

  function accept(id: string, inputId: string) {
    return fx.store.acceptInput({ sessionId: id, inputId, kind: 'send', payload: { text: inputId }, maxBytes: 10_000 });
  }

  it('accepts inputs of 6 sessions made together with one statement, each with its own seq', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => sessionId(`accept-${i}`));
    await accept(ids[0]!, 'earlier');
    let results: unknown[] = [];
    const sent = await statementsSent(async () => {
      results = await Promise.all(ids.map((id) => accept(id, 'now')));
    });
    expect(sent).toEqual([expect.objectContaining({ name: 'loopfleet_accept_inputs' })]);
    expect(results).toEqual(ids.map((id, i) => ({ sessionId: id, seq: i === 0 ? 2 : 1, inputId: 'now', duplicate: false, tenant: 'default' })));
    for (const id of ids) expect((await fx.store.getInputById(id, 'now'))?.payload).toEqual({ text: 'now' });
  });

  it('reports a repeated input id in a batch as a duplicate with its original seq; the others are accepted, no seq is used up', async () => {
    const ids = Array.from({ length: 4 }, (_, i) => sessionId(`dup-${i}`));
    expect(await accept(ids[1]!, 'retry')).toMatchObject({ seq: 1, duplicate: false });
    const results = await Promise.all(ids.map((id) => accept(id, 'retry')));
    expect(results.map((result) => [result.seq, result.duplicate])).toEqual([
      [1, false],
      [1, true],
      [1, false],
      [1, false],
    ]);
    expect(await sessionCounters(fx.pool, ids[1]!)).toMatchObject({ nextSeq: 1 });
    expect(await accept(ids[1]!, 'next')).toMatchObject({ seq: 2, duplicate: false });
  });

  it('accepts many inputs of one session made together, never two in one statement: seqs 1..12, gapless', async () => {
    const id = sessionId('one-session');
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => accept(id, `n-${i}`)));
    expect(results.map((result) => result.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(await sessionCounters(fx.pool, id)).toMatchObject({ nextSeq: 12 });
  });
});

describe('acquireLeaseAndClaim batches drain starts of different sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('acquire_batch');
  });

  afterAll(async () => {
    await fx.close();
  });

  it('takes each free lease and claims each first input with one statement; a held lease is reported as held', async () => {
    const [withInput, resumed, empty, held] = ['with-input', 'resumed', 'empty', 'held'].map((label) => sessionId(label));
    for (const id of [withInput!, resumed!]) {
      await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'one' }, maxBytes: 10_000 });
      await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'two' }, maxBytes: 10_000 });
    }
    await fx.store.createSession({ id: empty! });
    // `resumed` was running input 1 under a lease that lapsed; `held` is leased to worker-b.
    const old = await fx.store.acquireLeaseAndClaim({ sessionId: resumed!, owner: 'worker-old', ttlMs: 60_000 });
    if (!old.acquired) throw new Error('expected the lease');
    await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [resumed]);
    await leasedSession(fx.store, held!, 'worker-b');

    const ids = [withInput!, resumed!, empty!, held!];
    let outcomes: Awaited<ReturnType<typeof fx.store.acquireLeaseAndClaim>>[] = [];
    const sent = await statementsSent(async () => {
      outcomes = await Promise.all(ids.map((id) => fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 })));
    });
    const names = sent.map((config) => (config as { name?: string }).name);
    // One shared statement, then the holder of the one lease that was not free.
    expect(names.filter((name) => name === 'loopfleet_acquire_leases_and_claim')).toHaveLength(1);
    expect(sent).toHaveLength(2);

    const [a, b, c, d] = outcomes;
    expect(a).toMatchObject({ acquired: true, claimed: { input: { seq: 1, status: 'running', attempts: 1 }, resumed: false, pendingInputs: true, session: { id: withInput, status: 'running' } } });
    expect(b).toMatchObject({ acquired: true, claimed: { input: { seq: 1, status: 'running', attempts: 2 }, resumed: true, session: { id: resumed, status: 'running' } } });
    if (b?.acquired !== true) throw new Error('expected the takeover');
    expect(b.token).toBeGreaterThan(old.token);
    expect(c).toMatchObject({ acquired: true, claimed: null });
    expect(await fx.store.getSession(empty!)).toMatchObject({ status: 'idle' });
    for (const id of [withInput!, resumed!, empty!]) expect(await sessionCounters(fx.pool, id)).toMatchObject({ leaseOwner: 'worker-a' });
    expect(await sessionCounters(fx.pool, held!)).toMatchObject({ leaseOwner: 'worker-b' });
    expect(d).toMatchObject({ acquired: false, holder: 'worker-b' });
    expect(await fx.store.getInput(withInput!, 2)).toMatchObject({ status: 'pending' });
  });
});

describe('loadRunState and listInputs share round trips between sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('read_batch');
  });

  afterAll(async () => {
    await fx.close();
  });

  it("reads 5 sessions' run states and inboxes made together in one query each, every session its own rows", async () => {
    const sessions = await Promise.all(Array.from({ length: 5 }, (_, i) => runningSession(fx.store, `reads-${i}`)));
    for (const [i, { id, token }] of sessions.entries()) {
      await fx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user(`hello ${i}`) }] });
      for (let n = 0; n < i; n += 1) await fx.store.acceptInput({ sessionId: id, kind: 'send', mode: n % 2 === 0 ? 'queue' : 'steer', payload: { text: `later ${n}` }, maxBytes: 10_000 });
    }
    let states: Awaited<ReturnType<typeof fx.store.loadRunState>>[] = [];
    let inboxes: Awaited<ReturnType<typeof fx.store.listInputs>>[] = [];
    const sent = await statementsSent(async () => {
      states = await Promise.all(sessions.map(({ id }) => fx.store.loadRunState(id, 1)));
      inboxes = await Promise.all(sessions.map(({ id }) => fx.store.listInputs(id, { status: 'pending', afterSeq: 1 })));
    });
    expect(sent).toHaveLength(2);
    for (const [i, { id }] of sessions.entries()) {
      expect(states[i]!.window.map((stored) => [stored.seq, stored.message])).toEqual([[1, user(`hello ${i}`)]]);
      expect(states[i]).toMatchObject({ usageRounds: [], openToolCalls: [] });
      expect(inboxes[i]!.map((input) => [input.sessionId, input.seq, input.mode])).toEqual(
        Array.from({ length: i }, (_, n) => [id, n + 2, n % 2 === 0 ? 'queue' : 'steer']),
      );
    }
  });

  it('shares a statement among pages of different sessions with the same filter, each with its own start and length', async () => {
    const ids = ['page-a', 'page-b', 'page-c'].map((label) => sessionId(label));
    for (const id of ids) for (let n = 0; n < 5; n += 1) await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: `n${n}` }, maxBytes: 10_000 });
    let pages: Awaited<ReturnType<typeof fx.store.listInputs>>[] = [];
    const sent = await statementsSent(async () => {
      pages = await Promise.all([
        fx.store.listInputs(ids[0]!, { status: 'pending', afterSeq: 1, limit: 2 }),
        fx.store.listInputs(ids[1]!, { status: 'pending', afterSeq: 3 }),
        fx.store.listInputs(ids[2]!, { status: 'pending', limit: 1 }),
        fx.store.listInputs(ids[2]!, { status: ['done'] }),
      ]);
    });
    expect(sent).toHaveLength(1);
    expect(pages.map((page) => page.map((input) => `${input.sessionId}#${input.seq}`))).toEqual([
      [`${ids[0]}#2`, `${ids[0]}#3`],
      [`${ids[1]}#4`, `${ids[1]}#5`],
      [`${ids[2]}#1`],
      [],
    ]);
  });

  it('lists with no status filter, an empty one, several, and a limit', async () => {
    const id = sessionId('list-filters');
    for (let n = 0; n < 4; n += 1) await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: `n${n}` }, maxBytes: 10_000 });
    expect((await fx.store.listInputs(id)).map((input) => input.seq)).toEqual([1, 2, 3, 4]);
    expect(await fx.store.listInputs(id, { status: [] })).toEqual([]);
    expect((await fx.store.listInputs(id, { status: ['pending', 'done'], afterSeq: 1, limit: 2 })).map((input) => input.seq)).toEqual([2, 3]);
  });
});

describe('claimNextInput batches next claims of different sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('claim_batch');
  });

  afterAll(async () => {
    await fx.close();
  });

  it('claims each waiting input with one statement; an empty inbox is null and a stale token lease.lost, each on its own', async () => {
    const [waiting, empty, stale] = ['waiting', 'empty', 'stale'].map((label) => sessionId(label));
    const tokens = await Promise.all([waiting!, empty!, stale!].map((id) => leasedSession(fx.store, id)));
    for (const id of [waiting!, stale!]) {
      await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'one' }, maxBytes: 10_000 });
      await fx.store.acceptInput({ sessionId: id, kind: 'send', mode: 'steer', payload: { text: 'two' }, maxBytes: 10_000 });
    }
    await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [stale]);
    expect(await fx.store.acquireLease({ sessionId: stale!, owner: 'worker-b', ttlMs: 60_000 })).toMatchObject({ acquired: true });
    let outcomes: PromiseSettledResult<unknown>[] = [];
    const sent = await statementsSent(async () => {
      outcomes = await Promise.allSettled([waiting!, empty!, stale!].map((id, i) => fx.store.claimNextInput({ sessionId: id, leaseToken: tokens[i]! })));
    });
    expect(sent).toEqual([expect.objectContaining({ name: 'loopfleet_claim_next_inputs' })]);
    expect(outcomes[0]).toMatchObject({
      status: 'fulfilled',
      value: { input: { seq: 1, status: 'running' }, resumed: false, pendingInputs: true, pendingSteers: true, session: { id: waiting, status: 'running' } },
    });
    expect(outcomes[1]).toEqual({ status: 'fulfilled', value: null });
    expect(outcomes[2]).toMatchObject({ status: 'rejected', reason: { code: 'lease.lost' } });
    expect(await fx.store.getInput(stale!, 1)).toMatchObject({ status: 'pending' });
    expect(await fx.store.getSession(empty!)).toMatchObject({ status: 'idle' });
  });
});
