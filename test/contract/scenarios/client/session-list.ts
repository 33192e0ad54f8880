import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../../../src/core/ports/session-store.js';
import { accept, servedAgents, type ContractContext } from '../../contract-helpers.js';

/** `listSessions`: filters, newest first, keyset pages. Each scenario lists its own tenant, so sessions of others never show. */
export function sessionListScenarios(ctx: ContractContext): void {
  /** `count` sessions of a new tenant, created one after another; ids share a prefix and end in a two-digit index. */
  async function sessionsOf(label: string, count: number): Promise<{ tenant: string; ids: string[] }> {
    const tenant = ctx.id(`${label}-t`);
    const base = ctx.id(label);
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const id = `${base}-${String(i).padStart(2, '0')}`;
      await ctx.store.createSession({ id, tenant });
      ids.push(id);
    }
    return { tenant, ids };
  }

  /** Newest first: by creation time, then (same time) by id, both descending. */
  function expectNewestFirst(sessions: SessionSummary[]): void {
    for (let i = 1; i < sessions.length; i += 1) {
      const [a, b] = [sessions[i - 1]!, sessions[i]!];
      expect(a.createdAt.getTime()).toBeGreaterThanOrEqual(b.createdAt.getTime());
      if (a.createdAt.getTime() === b.createdAt.getTime()) expect(a.id > b.id).toBe(true);
    }
  }

  describe('listSessions', () => {
    it("lists a tenant's sessions newest first, as summaries", async () => {
      const { tenant, ids } = await sessionsOf('list', 3);
      await accept(ctx.store, ids[0]!);
      await accept(ctx.store, ids[0]!);
      const page = await ctx.store.listSessions({ tenant });
      expect(page.nextCursor).toBeNull();
      expect(page.sessions.map((s) => s.id).sort()).toEqual([...ids].sort());
      expectNewestFirst(page.sessions);
      const first = page.sessions.find((s) => s.id === ids[0]);
      const record = await ctx.store.getSession(ids[0]!);
      expect(first).toEqual({
        id: ids[0],
        tenant,
        agent: 'default',
        status: 'idle',
        parentSessionId: null,
        inputs: 2,
        stats: record?.stats,
        createdAt: record?.createdAt,
        lastActivityAt: record?.updatedAt,
      });
    });

    it('pages through several pages with no duplicate and no gap, the last with a null cursor', async () => {
      const { tenant, ids } = await sessionsOf('pages', 7);
      const all = await ctx.store.listSessions({ tenant, limit: 200 });
      expect(all.sessions).toHaveLength(7);
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages += 1) {
        const page = await ctx.store.listSessions(cursor === undefined ? { tenant, limit: 3 } : { tenant, limit: 3, cursor });
        sizes.push(page.sessions.length);
        seen.push(...page.sessions.map((s) => s.id));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      expect(sizes).toEqual([3, 3, 1]);
      expect(seen).toEqual(all.sessions.map((s) => s.id));
      expect([...seen].sort()).toEqual([...ids].sort());
      // A page that ends exactly at the last session says so.
      expect((await ctx.store.listSessions({ tenant, limit: 7 })).nextCursor).toBeNull();
      expect((await ctx.store.listSessions({ tenant })).sessions).toHaveLength(7);
    });

    it('filters by agent, status and id prefix, the prefix taken literally', async () => {
      const tenant = ctx.id('filters-t');
      const base = ctx.id('filters');
      const { names } = await servedAgents(ctx, 'lister');
      const [under, plain, other] = [`${base}_x1`, `${base}Zx2`, `${base}-x3`];
      await ctx.store.createSession({ id: under, tenant, agent: names[0] });
      await ctx.store.createSession({ id: plain, tenant });
      await ctx.store.createSession({ id: other, tenant });
      const lease = await ctx.store.acquireLease({ sessionId: other, owner: 'w', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('expected the lease');
      await accept(ctx.store, other);
      await ctx.store.claimNextInput({ sessionId: other, leaseToken: lease.token });
      const ids = async (options: Parameters<typeof ctx.store.listSessions>[0]) => (await ctx.store.listSessions(options)).sessions.map((s) => s.id).sort();
      expect(await ids({ tenant, agent: names[0] })).toEqual([under]);
      expect(await ids({ tenant, agent: 'default' })).toEqual([other, plain].sort());
      expect(await ids({ tenant, status: 'running' })).toEqual([other]);
      expect(await ids({ tenant, status: 'idle' })).toEqual([under, plain].sort());
      expect(await ids({ idPrefix: `${base}_` })).toEqual([under]);
      expect(await ids({ idPrefix: base })).toEqual([under, plain, other].sort());
      expect(await ids({ tenant, idPrefix: `${base}-`, status: 'running' })).toEqual([other]);
      expect(await ids({ tenant: ctx.id('nobody') })).toEqual([]);
    });

    it.each([
      ['a word', 'not-a-cursor'],
      ['empty', ''],
      ['base64url of other JSON', Buffer.from('{"a":1}').toString('base64url')],
      ['base64url of a bad time', Buffer.from('["yesterday","s"]').toString('base64url')],
      ['base64url of a bad id', Buffer.from('["2026-01-01T00:00:00.000000Z","a b"]').toString('base64url')],
      ['not a string', 42],
    ])('refuses a malformed cursor (%s) with input.invalid', async (_what, cursor) => {
      await expect(ctx.store.listSessions({ cursor: cursor as string })).rejects.toMatchObject({ code: 'input.invalid', message: expect.stringContaining('cursor') });
    });

    it('takes limits from 1 to 200 and refuses others with input.invalid', async () => {
      const { tenant } = await sessionsOf('limits', 2);
      const one = await ctx.store.listSessions({ tenant, limit: 1 });
      expect(one.sessions).toHaveLength(1);
      expect(one.nextCursor).not.toBeNull();
      expect((await ctx.store.listSessions({ tenant, limit: 200 })).sessions).toHaveLength(2);
      for (const limit of [0, 201, 1.5, -1, '3']) {
        await expect(ctx.store.listSessions({ tenant, limit: limit as number })).rejects.toMatchObject({ code: 'input.invalid', message: expect.stringContaining('limit') });
      }
    });

    it('refuses bad filters with input.invalid naming them', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ tenant: 'a b' }, 'tenant'],
        [{ agent: 'a:b' }, 'agent'],
        [{ status: 'done' }, 'status'],
        [{ idPrefix: '%' }, 'idPrefix'],
        [{ idPrefix: '' }, 'idPrefix'],
        [{ colour: 'red' }, 'colour'],
      ];
      for (const [options, field] of cases) {
        await expect(ctx.store.listSessions(options as never)).rejects.toMatchObject({ code: 'input.invalid', message: expect.stringContaining(field) });
      }
    });
  });
}
