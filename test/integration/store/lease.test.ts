import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistant, countRows, openStoreFixture, pollUntil, sessionCounters, sessionId, user, type StoreFixture } from './store-fixture.js';

describe('lease and fence', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('lease', { maxConnections: 15 });
  });

  afterAll(async () => {
    await fx.close();
  });

  it('gives token 1 on a free session, then refuses others while it is live', async () => {
    const id = sessionId('live');
    await fx.store.createSession({ id });
    const first = await fx.store.acquireLease({ sessionId: id, owner: 'worker-a', ttlMs: 30_000 });
    expect(first).toMatchObject({ acquired: true, token: 1 });
    const second = await fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 30_000 });
    expect(second).toMatchObject({ acquired: false, holder: 'worker-a' });
    if (second.acquired) throw new Error('unreachable');
    expect(second.retryAfterMs).toBeGreaterThan(0);
    expect(second.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(await fx.store.getSession(id)).toMatchObject({ lease: { owner: 'worker-a', token: 1 } });
  });

  it('refuses a lease on a session that does not exist with session.not_found', async () => {
    await expect(fx.store.acquireLease({ sessionId: sessionId('ghost'), owner: 'w', ttlMs: 1000 })).rejects.toMatchObject({
      code: 'session.not_found',
    });
  });

  it('lets exactly one of 10 racing workers win', async () => {
    const id = sessionId('race');
    await fx.store.createSession({ id });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => fx.store.acquireLease({ sessionId: id, owner: `worker-${i}`, ttlMs: 30_000 })),
    );
    const winners = results.flatMap((result, i) => (result.acquired ? [{ i, token: result.token }] : []));
    expect(winners).toHaveLength(1);
    expect(winners[0]?.token).toBe(1);
    const counters = await sessionCounters(fx.pool, id);
    expect(counters).toMatchObject({ leaseToken: 1, leaseOwner: `worker-${winners[0]?.i}` });
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

  it('hands a lapsed lease to a new holder with token+1 and fences the old one out', async () => {
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
    expect(taken.token).toBe(old.token + 1);

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
    expect(next).toMatchObject({ acquired: true, token: lease.token + 1 });
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
