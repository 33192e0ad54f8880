import { describe, expect, it } from 'vitest';
import { accept, expectCode, servedAgents, snapshot, spawnRequest, type ContractContext } from '../../contract-helpers.js';

/** A session's tenant: named at create or by the add that creates it, never changed, inherited by children. */
export function tenantScenarios(ctx: ContractContext): void {
  describe('tenants', () => {
    it('creates a session for a tenant, or for default when none is named', async () => {
      const [id, plain, tenant] = [ctx.id('tenant-create'), ctx.id('tenant-plain'), ctx.id('acme')];
      expect((await ctx.store.createSession({ id, tenant })).tenant).toBe(tenant);
      expect((await ctx.store.getSession(id))?.tenant).toBe(tenant);
      expect((await ctx.store.createSession({ id: plain })).tenant).toBe('default');
    });

    it.each([['empty', ''], ['too long', 't'.repeat(129)], ['a space', 'a b'], ['a slash', 'a/b'], ['not a string', 42]])(
      'refuses a tenant that is %s with input.invalid naming tenant, writing nothing',
      async (_what, tenant) => {
        const id = ctx.id('tenant-bad');
        await expect(ctx.store.createSession({ id, tenant: tenant as string })).rejects.toMatchObject({ code: 'input.invalid', message: expect.stringContaining('tenant') });
        await expect(accept(ctx.store, id, { tenant: tenant as string })).rejects.toMatchObject({ code: 'input.invalid', message: expect.stringContaining('tenant') });
        expect(await ctx.store.getSession(id)).toBeNull();
      },
    );

    it('gives a session the tenant the add that creates it names; later adds may name it or none', async () => {
      const [id, plain, tenant] = [ctx.id('tenant-add'), ctx.id('tenant-add-plain'), ctx.id('globex')];
      expect((await accept(ctx.store, id, { tenant })).seq).toBe(1);
      expect((await accept(ctx.store, id, { tenant })).seq).toBe(2);
      expect((await accept(ctx.store, id)).seq).toBe(3);
      expect(await ctx.store.getSession(id)).toMatchObject({ tenant, nextSeq: 3 });
      await accept(ctx.store, plain);
      expect((await ctx.store.getSession(plain))?.tenant).toBe('default');
    });

    it('refuses an add naming another tenant with session.tenant_mismatch, writing nothing', async () => {
      const [id, onDefault, tenant, other] = [ctx.id('tenant-mismatch'), ctx.id('tenant-mismatch-default'), ctx.id('initech'), ctx.id('umbrella')];
      await ctx.store.createSession({ id, tenant });
      await accept(ctx.store, id, { inputId: 'first' });
      await accept(ctx.store, onDefault);
      const before = await snapshot(ctx.store, id);
      // The session's own tenant is not told to a caller of another one.
      await expect(accept(ctx.store, id, { tenant: other })).rejects.toMatchObject({ code: 'session.tenant_mismatch', details: { sessionId: id, tenant: other } });
      // Not even a repeated input id gets through (its seq would tell the input exists).
      await expectCode(accept(ctx.store, id, { inputId: 'first', tenant: other }), 'session.tenant_mismatch');
      // Another tenant is refused as such even when the agent differs too.
      const { names } = await servedAgents(ctx, 'tenant-agent');
      await expectCode(accept(ctx.store, id, { tenant: other, agent: names[0] }), 'session.tenant_mismatch');
      expect(await snapshot(ctx.store, id)).toEqual(before);
      await expectCode(accept(ctx.store, onDefault, { tenant }), 'session.tenant_mismatch');
      expect(await ctx.store.getSession(onDefault)).toMatchObject({ tenant: 'default', nextSeq: 1 });
    });

    it('refuses one add and accepts the others made at the same moment (one batched statement)', async () => {
      const [ok, mismatched, tenant] = [ctx.id('tenant-batch-ok'), ctx.id('tenant-batch-mismatch'), ctx.id('hooli')];
      await accept(ctx.store, mismatched);
      const outcomes = await Promise.allSettled([accept(ctx.store, ok, { tenant }), accept(ctx.store, mismatched, { tenant })]);
      expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.seq : (outcome.reason as { code: string }).code))).toEqual([1, 'session.tenant_mismatch']);
      expect((await ctx.store.getSession(ok))?.tenant).toBe(tenant);
    });

    it("creates a child session in its parent's tenant", async () => {
      const [id, tenant] = [ctx.id('tenant-parent'), ctx.id('stark')];
      await ctx.store.createSession({ id, tenant });
      const lease = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-a', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('expected the lease');
      await accept(ctx.store, id);
      await ctx.store.claimNextInput({ sessionId: id, leaseToken: lease.token });
      const spawn = spawnRequest({ id, token: lease.token }, 'call_t');
      expect(await ctx.store.spawnChild(spawn)).toMatchObject({ kind: 'created' });
      expect(await ctx.store.getSession(spawn.childSessionId)).toMatchObject({ tenant, parentSessionId: id });
    });
  });
}
