import { describe, expect, it } from 'vitest';
import type { SessionStore } from '../../../../src/core/ports/session-store.js';
import { accept, expectCode, leased, servedAgents, toolCall, usageRound, user, type ContractContext } from '../../contract-helpers.js';

/** Every port method with a bad session id (and otherwise valid arguments). */
function everyMethod(store: SessionStore, id: string): Array<[string, () => Promise<unknown>]> {
  const fenced = { sessionId: id, leaseToken: 1 };
  return [
    ['createSession', () => store.createSession({ id })],
    ['getSession', () => store.getSession(id)],
    ['deleteSession', () => store.deleteSession(id)],
    ['acceptInput', () => accept(store, id)],
    ['acquireLease', () => store.acquireLease({ sessionId: id, owner: 'w', ttlMs: 1000 })],
    ['renewLease', () => store.renewLease({ sessionId: id, token: 1, ttlMs: 1000 })],
    ['releaseLease', () => store.releaseLease({ sessionId: id, token: 1 })],
    ['claimNextInput', () => store.claimNextInput(fenced)],
    ['commitStep', () => store.commitStep({ ...fenced, messages: [{ inputSeq: null, round: null, message: user('x') }] })],
    ['loadWindow', () => store.loadWindow(id)],
    ['loadHistory', () => store.loadHistory(id, { includeCompacted: true })],
    ['getInput', () => store.getInput(id, 1)],
    ['getInputById', () => store.getInputById(id, 'x')],
    ['listInputs', () => store.listInputs(id)],
    ['countInputs', () => store.countInputs(id)],
    ['loadOpenToolCalls', () => store.loadOpenToolCalls(id)],
    ['getUsageRounds', () => store.getUsageRounds(id)],
    ['requestCancel', () => store.requestCancel(id)],
    ['clearCancel', () => store.clearCancel(fenced)],
    ['readCancelRequest', () => store.readCancelRequest(id)],
  ];
}

export function sessionScenarios(ctx: ContractContext): void {
  describe('sessions', () => {
    it('creates a session with defaults and reads the same record back', async () => {
      const id = ctx.id('create');
      const created = await ctx.store.createSession({ id });
      expect(created).toMatchObject({
        id,
        agent: 'default',
        systemPrompt: null,
        metadata: {},
        config: {},
        status: 'idle',
        nextSeq: 0,
        nextMessageSeq: 0,
        lease: { owner: null, token: 0, expiresAt: null },
        pending: null,
        cancelRequestedAt: null,
      });
      expect(created.stats).toEqual({
        inputs: 0,
        rounds: 0,
        llmCalls: 0,
        toolCalls: 0,
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        totalTokens: 0,
        costUsd: 0,
        costPicoUsd: 0,
        firstInputAt: null,
        lastInputAt: null,
      });
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(created.updatedAt).toBeInstanceOf(Date);
      expect(await ctx.store.getSession(id)).toEqual(created);
    });

    it('stores the profile it is given, and a 128-character id', async () => {
      const id = `${ctx.id('profile')}-`.padEnd(128, 'x');
      const { names } = await servedAgents(ctx, 'researcher');
      const profile = { agent: names[0], systemPrompt: 'Be brief.', metadata: { tenant: 't1', tags: ['a', { b: null }] }, config: { maxRounds: 5 } };
      await ctx.store.createSession({ id, ...profile });
      expect(await ctx.store.getSession(id)).toMatchObject({ id, ...profile });
    });

    it('refuses a duplicate id with session.exists and keeps the original', async () => {
      const id = ctx.id('dup');
      const { names } = await servedAgents(ctx, 'first', 'second');
      await ctx.store.createSession({ id, agent: names[0] });
      await expectCode(ctx.store.createSession({ id, agent: names[1] }), 'session.exists');
      expect((await ctx.store.getSession(id))?.agent).toBe(names[0]);
    });

    it('refuses to create over a session that acceptInput created', async () => {
      const id = ctx.id('implicit');
      await accept(ctx.store, id);
      await expectCode(ctx.store.createSession({ id }), 'session.exists');
      expect((await ctx.store.getSession(id))?.nextSeq).toBe(1);
    });

    it.each([
      ['empty', ''],
      ['129 characters', 'a'.repeat(129)],
      ['a space', 'a b'],
      ['a slash', 'a/b'],
      ['a number', 42],
      ['null', null],
    ])('refuses an id that is %s with session.invalid_id in every method', async (_label, bad) => {
      for (const [method, call] of everyMethod(ctx.store, bad as unknown as string)) {
        await expect(call(), method).rejects.toMatchObject({ code: 'session.invalid_id' });
      }
    });

    it.each([
      ['metadata that is an array', { metadata: ['x'] }],
      ['config that is a string', { config: 'x' }],
      ['an empty agent', { agent: '' }],
      ['a systemPrompt that is not a string', { systemPrompt: 5 }],
      ['a NUL character in the system prompt', { systemPrompt: 'a\u0000b' }],
    ])('refuses %s with input.invalid and creates nothing', async (_label, fields) => {
      const id = ctx.id('badfield');
      await expectCode(ctx.store.createSession({ id, ...(fields as object) }), 'input.invalid');
      expect(await ctx.store.getSession(id)).toBeNull();
    });

    it.each([null, 'support-1', ['support-1']])('refuses parameters %j that are not an object with input.invalid', async (params) => {
      await expectCode(ctx.store.createSession(params as unknown as Parameters<typeof ctx.store.createSession>[0]), 'input.invalid');
    });

    it('returns null from get and delete for a session that does not exist', async () => {
      const id = ctx.id('missing');
      expect(await ctx.store.getSession(id)).toBeNull();
      expect(await ctx.store.deleteSession(id)).toBeNull();
    });

    it('deletes a session with everything it owns; the id then starts afresh', async () => {
      const { id, token } = await leased(ctx, 'delete');
      await accept(ctx.store, id, { inputId: 'first' });
      await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 0, message: user('hi') }],
        toolCalls: [toolCall('call_1', 'started')],
        usageRounds: [usageRound(1, 0, 10)],
      });

      expect(await ctx.store.deleteSession(id)).toEqual({ leaseToken: token, descendants: [] });
      expect(await ctx.store.getSession(id)).toBeNull();
      expect(await ctx.store.loadHistory(id, { includeCompacted: true })).toEqual([]);
      expect(await ctx.store.listInputs(id)).toEqual([]);
      expect(await ctx.store.getInputById(id, 'first')).toBeNull();
      expect(await ctx.store.loadOpenToolCalls(id)).toEqual([]);
      expect(await ctx.store.getUsageRounds(id)).toEqual([]);
      expect(await ctx.store.deleteSession(id)).toBeNull();

      expect(await accept(ctx.store, id, { inputId: 'first' })).toMatchObject({ seq: 1, duplicate: false });
      expect(await ctx.store.getSession(id)).toMatchObject({ nextSeq: 1, nextMessageSeq: 0, pending: null, stats: { inputs: 0 } });
      // The deleted session's fence: every lease of the session created again has a larger token.
      const again = await ctx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 30_000 });
      if (!again.acquired) throw new Error('lease not acquired');
      expect(again.token).toBeGreaterThan(token);
    });

    it('answers 0 as the lease token of a session that was never leased', async () => {
      const id = ctx.id('never-leased');
      await ctx.store.createSession({ id });
      expect(await ctx.store.deleteSession(id)).toEqual({ leaseToken: 0, descendants: [] });
    });
  });
}
