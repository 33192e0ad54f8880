import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNT_TENANT_LEASES_SQL } from '../../../src/store/lease/acquire-capped-lease-sql.js';
import { findStrandedSessions } from '../../../src/store/upkeep/find-stranded-sessions.js';
import { queriesSent, openStoreFixture, sessionId, type StoreFixture } from '../store/store-fixture.js';

/** The lease of a capped tenant's session (docs/tenant-limits.md), against Postgres. */
describe('the lease under a tenant cap on inputs running at once', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('capped_lease', { maxConnections: 30 });
  });

  afterAll(async () => {
    await fx.close();
  });

  async function sessionsOf(tenant: string, count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, i) => sessionId(`${tenant}-${i}`));
    for (const id of ids) await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'hi' }, maxBytes: 10_000, tenant });
    return ids;
  }

  async function liveLeases(tenant: string): Promise<number> {
    const result = await fx.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE tenant = $1 AND lease_expires_at > now()`, [tenant]);
    return result.rows[0]!.n;
  }

  it('20 concurrent takes of a tenant capped at 3: exactly 3 leases, the rest told the tenant is at its cap', async () => {
    await fx.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('acme', 3)`);
    const ids = await sessionsOf('acme', 20);
    const answers = await Promise.all(ids.map((id, i) => fx.store.acquireLeaseAndClaim({ sessionId: id, owner: `w${i}`, ttlMs: 60_000 })));
    const taken = answers.filter((answer) => answer.acquired);
    expect(taken).toHaveLength(3);
    for (const answer of taken) expect(answer).toMatchObject({ cappedTenant: 'acme', claimed: { input: { seq: 1 } } });
    const refused = answers.filter((answer) => !answer.acquired);
    expect(refused).toHaveLength(17);
    for (const answer of refused) expect(answer).toMatchObject({ acquired: false, atCap: { tenant: 'acme', limit: 3 } });
    expect(await liveLeases('acme')).toBe(3);
    // Nothing of a refused session was claimed.
    const running = await fx.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = 'acme' AND i.status = 'running'`);
    expect(running.rows[0]!.n).toBe(3);

    // A release frees a slot; a lapsed lease (a dead holder) frees one too, with nothing to renew.
    const [first, second] = taken as Array<Extract<(typeof taken)[number], { acquired: true }>>;
    const firstId = ids[answers.indexOf(first!)]!;
    const secondId = ids[answers.indexOf(second!)]!;
    await fx.store.releaseLease({ sessionId: firstId, token: first!.token });
    await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [secondId]);
    const waiting = ids.filter((id) => id !== firstId && id !== secondId && !taken.some((answer) => answer === answers[ids.indexOf(id)]));
    const next = await Promise.all(waiting.slice(0, 5).map((id) => fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'w-next', ttlMs: 60_000, cappedTenant: 'acme' })));
    expect(next.filter((answer) => answer.acquired)).toHaveLength(2);
    expect(await liveLeases('acme')).toBe(3);
  });

  it('a tenant without a cap takes its lease in the one batched statement, whatever other tenants cap', async () => {
    await fx.pool.query(`INSERT INTO tenant_settings (tenant, weight) VALUES ('free', 200)`);
    const [id] = await sessionsOf('free', 1);
    const sent = await queriesSent(() => fx.store.acquireLeaseAndClaim({ sessionId: id!, owner: 'w', ttlMs: 60_000 }));
    expect(sent).toHaveLength(1);
    const [other] = await sessionsOf('nobody', 1);
    const answer = await fx.store.acquireLeaseAndClaim({ sessionId: other!, owner: 'w', ttlMs: 60_000 });
    expect(answer).toMatchObject({ acquired: true, claimed: { input: { seq: 1 } } });
    expect(answer).not.toHaveProperty('cappedTenant');
  });

  it('a cap removed: the plain take leases again', async () => {
    await fx.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('lifted', 1)`);
    const ids = await sessionsOf('lifted', 3);
    expect(await fx.store.acquireLeaseAndClaim({ sessionId: ids[0]!, owner: 'w', ttlMs: 60_000 })).toMatchObject({ acquired: true });
    expect(await fx.store.acquireLeaseAndClaim({ sessionId: ids[1]!, owner: 'w', ttlMs: 60_000 })).toMatchObject({ acquired: false, atCap: { limit: 1 } });
    await fx.pool.query(`UPDATE tenant_settings SET max_concurrent_inputs = NULL WHERE tenant = 'lifted'`);
    expect(await fx.store.acquireLeaseAndClaim({ sessionId: ids[1]!, owner: 'w', ttlMs: 60_000 })).toMatchObject({ acquired: true });
    // A caller whose cache still says capped is leased too: the take finds no cap under the lock.
    expect(await fx.store.acquireLeaseAndClaim({ sessionId: ids[2]!, owner: 'w', ttlMs: 60_000, cappedTenant: 'lifted' })).toMatchObject({ acquired: true });
  });

  it('the sweeper kicks as many stranded sessions of a capped tenant as it has free slots, and parks the rest', async () => {
    await fx.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('swept', 2)`);
    const ids = await sessionsOf('swept', 6);
    const [plain] = await sessionsOf('unswept', 1);
    await fx.pool.query(`UPDATE session_inputs SET accepted_at = now() - interval '1 hour' WHERE session_id = ANY($1)`, [[...ids, plain]]);
    expect(await fx.store.acquireLeaseAndClaim({ sessionId: ids[0]!, owner: 'w', ttlMs: 60_000 })).toMatchObject({ acquired: true });
    const found = await findStrandedSessions(fx.pool, { graceMs: 1_000, limit: 100 });
    const mine = found.filter((entry) => ids.includes(entry.sessionId));
    expect(mine).toHaveLength(5);
    expect(mine.filter((entry) => entry.parkFor === null)).toHaveLength(1);
    expect(mine.filter((entry) => entry.parkFor === 'swept')).toHaveLength(4);
    expect(found.find((entry) => entry.sessionId === plain)).toEqual({ sessionId: plain, tenant: 'unswept', parkFor: null });
  });

  it("counts a tenant's leases through the partial index sessions_tenant_leased_idx", async () => {
    const client = await fx.pool.connect();
    try {
      await client.query('BEGIN');
      // The test tables are tiny: forbid the sequential scan to see that the index can answer.
      await client.query('SET LOCAL enable_seqscan = off');
      const plan = await client.query(`EXPLAIN (FORMAT JSON) ${COUNT_TENANT_LEASES_SQL}`, ['acme']);
      expect(JSON.stringify(plan.rows[0])).toContain('sessions_tenant_leased_idx');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('a lapsed lease of a capped tenant is not revived by a late heartbeat; of another tenant it still is', async () => {
    await fx.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('late', 5)`);
    const [capped] = await sessionsOf('late', 1);
    const [plain] = await sessionsOf('punctual', 1);
    const tokens: number[] = [];
    for (const id of [capped!, plain!]) {
      const lease = await fx.store.acquireLeaseAndClaim({ sessionId: id, owner: 'w', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error(`expected the lease of ${id}`);
      tokens.push(lease.token);
    }
    await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [[capped, plain]]);
    await expect(fx.store.renewLease({ sessionId: capped!, token: tokens[0]!, ttlMs: 60_000 })).rejects.toMatchObject({ code: 'lease.lost' });
    await expect(fx.store.renewLease({ sessionId: plain!, token: tokens[1]!, ttlMs: 60_000 })).resolves.toBeInstanceOf(Date);
    // A live lease of the capped tenant renews as any other.
    const [live] = await sessionsOf('late', 1);
    const lease = await fx.store.acquireLeaseAndClaim({ sessionId: live!, owner: 'w', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('expected the lease');
    await expect(fx.store.renewLease({ sessionId: live!, token: lease.token, ttlMs: 60_000 })).resolves.toBeInstanceOf(Date);
  });
});
