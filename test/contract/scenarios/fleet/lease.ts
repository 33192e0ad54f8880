import { describe, expect, it } from 'vitest';
import { accept, CLOCK_SLACK_MS, expectCode, leased, pollUntil, user, type ContractContext } from '../../contract-helpers.js';

/** Short enough to wait out in a test, long enough that the store sees it live first. */
const SHORT_TTL_MS = 300;

export function leaseScenarios(ctx: ContractContext): void {
  describe('lease', () => {
    it('gives a positive token on a free session and refuses others while it is live, naming the holder', async () => {
      const id = ctx.id('live');
      await ctx.store.createSession({ id });
      const before = ctx.now();
      const first = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-a', ttlMs: 30_000 });
      const after = ctx.now();
      if (!first.acquired) throw new Error('expected the lease');
      expect(first.token).toBeGreaterThan(0);
      expect(first.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 30_000 - CLOCK_SLACK_MS);
      expect(first.expiresAt.getTime()).toBeLessThanOrEqual(after + 30_000 + CLOCK_SLACK_MS);
      expect((await ctx.store.getSession(id))?.lease).toEqual({ owner: 'worker-a', token: first.token, expiresAt: first.expiresAt });

      for (const owner of ['worker-b', 'worker-a']) {
        const refused = await ctx.store.acquireLease({ sessionId: id, owner, ttlMs: 30_000 });
        if (refused.acquired) throw new Error(`${owner} must not get a live lease`);
        expect(refused.holder).toBe('worker-a');
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(30_000);
      }
      expect((await ctx.store.getSession(id))?.lease.token).toBe(first.token);
    });

    it('refuses a lease on a session that does not exist with session.not_found', async () => {
      await expectCode(ctx.store.acquireLease({ sessionId: ctx.id('ghost'), owner: 'w', ttlMs: 1000 }), 'session.not_found');
    });

    it('lets exactly one of 10 racing acquirers win, and its token is the session\'s current one', async () => {
      const id = ctx.id('race');
      await ctx.store.createSession({ id });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ctx.store.acquireLease({ sessionId: id, owner: `worker-${i}`, ttlMs: 30_000 })));
      const winners = results.flatMap((result, i) => (result.acquired ? [{ owner: `worker-${i}`, token: result.token }] : []));
      expect(winners).toHaveLength(1);
      expect(winners[0]?.token).toBeGreaterThan(0);
      expect((await ctx.store.getSession(id))?.lease).toMatchObject({ owner: winners[0]?.owner, token: winners[0]?.token });
    });

    it('gives each acquisition of a session a greater token than the one before, whatever happens in between', async () => {
      const id = ctx.id('increasing');
      const other = ctx.id('increasing-other');
      await ctx.store.createSession({ id });
      await ctx.store.createSession({ id: other });
      const tokens: number[] = [];
      const take = async (sessionId: string): Promise<number> => {
        const lease = await ctx.store.acquireLease({ sessionId, owner: 'w', ttlMs: 60_000 });
        if (!lease.acquired) throw new Error(`expected the lease of ${sessionId}`);
        expect(lease.token).toBeGreaterThan(0);
        return lease.token;
      };
      for (let round = 0; round < 3; round += 1) {
        const token = await take(id);
        tokens.push(token);
        // Another session's acquisitions in between do not matter.
        const otherToken = await take(other);
        await ctx.store.releaseLease({ sessionId: other, token: otherToken });
        expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(true);
      }
      // Deleted and created again: still greater than every token the id had before.
      expect(await ctx.store.deleteSession(id)).toEqual({ leaseToken: expect.any(Number), descendants: [] });
      await ctx.store.createSession({ id });
      tokens.push(await take(id));
      expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
      expect(new Set(tokens).size).toBe(tokens.length);
    });

    it('extends a live lease on renew', async () => {
      const id = ctx.id('renew');
      await ctx.store.createSession({ id });
      const lease = await ctx.store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 1_000 });
      if (!lease.acquired) throw new Error('expected the lease');
      const renewed = await ctx.store.renewLease({ sessionId: id, token: lease.token, ttlMs: 60_000 });
      expect(renewed.getTime()).toBeGreaterThan(lease.expiresAt.getTime() + 50_000);
      expect((await ctx.store.getSession(id))?.lease).toEqual({ owner: 'w', token: lease.token, expiresAt: renewed });
    });

    it('after a release: stale renew is lease.lost, stale release is false, and the next holder gets a greater token', async () => {
      const { id, token } = await leased(ctx, 'release');
      expect(token).toBeGreaterThan(0);
      await expectCode(ctx.store.renewLease({ sessionId: id, token: token + 1, ttlMs: 60_000 }), 'lease.lost');
      expect(await ctx.store.releaseLease({ sessionId: id, token: token + 1 })).toBe(false);
      expect((await ctx.store.getSession(id))?.lease).toMatchObject({ owner: 'worker-a', token });

      expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(true);
      expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(false);
      expect((await ctx.store.getSession(id))?.lease).toEqual({ owner: null, token, expiresAt: null });
      // A late heartbeat must not take back a session its holder gave up.
      await expectCode(ctx.store.renewLease({ sessionId: id, token, ttlMs: 60_000 }), 'lease.lost');
      expect((await ctx.store.getSession(id))?.lease.expiresAt).toBeNull();

      const next = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      if (!next.acquired) throw new Error('expected the lease');
      expect(next.token).toBeGreaterThan(token);
      await expectCode(ctx.store.renewLease({ sessionId: id, token, ttlMs: 60_000 }), 'lease.lost');
      expect(await ctx.store.releaseLease({ sessionId: id, token })).toBe(false);
      expect((await ctx.store.getSession(id))?.lease).toMatchObject({ owner: 'worker-b', token: next.token });
    });

    it('hands a lapsed lease to a new holder with a greater token and fences the old holder out', async () => {
      const id = ctx.id('lapse');
      await ctx.store.createSession({ id });
      await accept(ctx.store, id);
      const old = await ctx.store.acquireLease({ sessionId: id, owner: 'zombie', ttlMs: SHORT_TTL_MS });
      if (!old.acquired) throw new Error('expected the lease');
      await ctx.store.commitStep({ sessionId: id, leaseToken: old.token, messages: [{ inputSeq: null, round: null, message: user('one') }] });

      const taken = await pollUntil(
        async () => {
          const attempt = await ctx.store.acquireLease({ sessionId: id, owner: 'rescuer', ttlMs: 60_000 });
          return attempt.acquired ? attempt : undefined;
        },
        5_000 + SHORT_TTL_MS,
        'the short lease to lapse',
      );
      expect(taken.token).toBeGreaterThan(old.token);

      const fenced = { sessionId: id, leaseToken: old.token };
      await expectCode(ctx.store.commitStep({ ...fenced, messages: [{ inputSeq: null, round: null, message: user('from the grave') }] }), 'lease.lost');
      await expectCode(ctx.store.claimNextInput(fenced), 'lease.lost');
      await expectCode(ctx.store.clearCancel(fenced), 'lease.lost');
      await expectCode(ctx.store.renewLease({ sessionId: id, token: old.token, ttlMs: 60_000 }), 'lease.lost');
      expect(await ctx.store.releaseLease({ sessionId: id, token: old.token })).toBe(false);
      expect((await ctx.store.getSession(id))?.lease).toEqual({ owner: 'rescuer', token: taken.token, expiresAt: taken.expiresAt });
      expect((await ctx.store.getInput(id, 1))?.status).toBe('pending');

      const step = await ctx.store.commitStep({ sessionId: id, leaseToken: taken.token, messages: [{ inputSeq: null, round: null, message: user('alive') }] });
      expect(step.messageSeqs).toEqual([2]);
      expect((await ctx.store.loadWindow(id)).map((m) => m.message.content)).toEqual(['one', 'alive']);
    });

    it('refuses nonsensical lease arguments with input.invalid, changing nothing', async () => {
      const id = ctx.id('args');
      await ctx.store.createSession({ id });
      await expectCode(ctx.store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 0 }), 'input.invalid');
      await expectCode(ctx.store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 1.5 }), 'input.invalid');
      await expectCode(ctx.store.acquireLease({ sessionId: id, owner: '', ttlMs: 1000 }), 'input.invalid');
      await expectCode(ctx.store.renewLease({ sessionId: id, token: 0, ttlMs: 1000 }), 'input.invalid');
      await expectCode(ctx.store.releaseLease({ sessionId: id, token: 0 }), 'input.invalid');
      await expectCode(ctx.store.claimNextInput({ sessionId: id, leaseToken: 0 }), 'input.invalid');
      await expectCode(ctx.store.commitStep({ sessionId: id, leaseToken: -1 }), 'input.invalid');
      expect((await ctx.store.getSession(id))?.lease).toEqual({ owner: null, token: 0, expiresAt: null });
    });
  });
}
