import { describe, expect, it } from 'vitest';
import { accept, expectCode, servedAgents, snapshot, type ContractContext } from '../../contract-helpers.js';

/** A session's agent: named at create or by the add that creates it, checked against the registry. */
export function agentChoiceScenarios(ctx: ContractContext): void {
  describe('agent choice', () => {
    it('creates a session on a registered agent and accepts adds naming it or none', async () => {
      const id = ctx.id('agent-create');
      const { names } = await servedAgents(ctx, 'support');
      const agent = names[0]!;
      expect((await ctx.store.createSession({ id, agent })).agent).toBe(agent);
      expect((await accept(ctx.store, id, { agent })).seq).toBe(1);
      expect((await accept(ctx.store, id)).seq).toBe(2);
      expect(await ctx.store.getSession(id)).toMatchObject({ agent, nextSeq: 2 });
    });

    it('gives a session the agent the add that creates it names', async () => {
      const id = ctx.id('agent-add');
      const { names } = await servedAgents(ctx, 'sales');
      await accept(ctx.store, id, { agent: names[0] });
      expect((await ctx.store.getSession(id))?.agent).toBe(names[0]);
    });

    it('always accepts default, registered or not', async () => {
      const created = ctx.id('agent-default-create');
      const added = ctx.id('agent-default-add');
      expect((await ctx.store.createSession({ id: created, agent: 'default' })).agent).toBe('default');
      await accept(ctx.store, created, { agent: 'default' });
      await accept(ctx.store, added, { agent: 'default' });
      expect((await ctx.store.getSession(added))?.agent).toBe('default');
    });

    it('refuses an agent no worker registered with agent.not_found, writing nothing', async () => {
      const fresh = ctx.id('agent-unknown');
      const existing = ctx.id('agent-unknown-existing');
      const agent = ctx.id('nobody');
      await expectCode(ctx.store.createSession({ id: fresh, agent }), 'agent.not_found');
      await expectCode(accept(ctx.store, fresh, { agent }), 'agent.not_found');
      expect(await snapshot(ctx.store, fresh)).toEqual(await snapshot(ctx.store, ctx.id('never')));
      await accept(ctx.store, existing);
      const before = await snapshot(ctx.store, existing);
      await expectCode(accept(ctx.store, existing, { agent }), 'agent.not_found');
      expect(await snapshot(ctx.store, existing)).toEqual(before);
    });

    it('refuses an add naming another agent than its session with session.agent_mismatch, writing nothing', async () => {
      const id = ctx.id('agent-mismatch');
      const onDefault = ctx.id('agent-mismatch-default');
      const { names } = await servedAgents(ctx, 'one', 'two');
      await ctx.store.createSession({ id, agent: names[0] });
      await accept(ctx.store, id, { inputId: 'first' });
      await accept(ctx.store, onDefault);
      const before = await snapshot(ctx.store, id);
      const refused = accept(ctx.store, id, { agent: names[1] });
      await expect(refused).rejects.toMatchObject({ code: 'session.agent_mismatch', details: { sessionId: id, agent: names[1], sessionAgent: names[0] } });
      // Not even a repeated input id gets through under another agent.
      await expectCode(accept(ctx.store, id, { inputId: 'first', agent: 'default' }), 'session.agent_mismatch');
      expect(await snapshot(ctx.store, id)).toEqual(before);
      await expectCode(accept(ctx.store, onDefault, { agent: names[0] }), 'session.agent_mismatch');
      expect((await ctx.store.getSession(onDefault))?.nextSeq).toBe(1);
    });

    it('refuses one add and accepts the others made at the same moment (one batched statement)', async () => {
      const [ok, unknown, mismatched] = [ctx.id('agent-batch-ok'), ctx.id('agent-batch-unknown'), ctx.id('agent-batch-mismatch')];
      const { names } = await servedAgents(ctx, 'batch');
      await accept(ctx.store, mismatched);
      const outcomes = await Promise.allSettled([
        accept(ctx.store, ok, { agent: names[0] }),
        accept(ctx.store, unknown, { agent: ctx.id('nobody') }),
        accept(ctx.store, mismatched, { agent: names[0] }),
      ]);
      expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.seq : (outcome.reason as { code: string }).code))).toEqual([
        1,
        'agent.not_found',
        'session.agent_mismatch',
      ]);
      expect(await ctx.store.getSession(unknown)).toBeNull();
    });

    it('still accepts an agent whose worker stopped (a restart refuses nothing); refuses it once no row names it', async () => {
      const id = ctx.id('agent-gone');
      const { workerId, names } = await servedAgents(ctx, 'leaving');
      await accept(ctx.store, id, { agent: names[0] });
      await ctx.registry.unregisterWorker(workerId);
      expect((await accept(ctx.store, id, { agent: names[0] })).seq).toBe(2);
      // Its rows gone (an empty registration removes them, as the prune does a day later).
      await ctx.registry.registerAgents(workerId, []);
      await expectCode(accept(ctx.store, id, { agent: names[0] }), 'agent.not_found');
      // A session already on it still takes adds that name no agent: they wait for a worker.
      expect((await accept(ctx.store, id)).seq).toBe(3);
    });

    it.each([
      ['empty', ''],
      ['65 characters', 'a'.repeat(65)],
      ['a space', 'a b'],
      ['a colon', 'a:b'],
      ['a number', 42],
      ['null', null],
    ])('refuses an agent name that is %s with input.invalid, writing nothing', async (_label, bad) => {
      const id = ctx.id('agent-bad');
      await expectCode(ctx.store.createSession({ id, agent: bad as string }), 'input.invalid');
      await expectCode(accept(ctx.store, id, { agent: bad as string }), 'input.invalid');
      expect(await ctx.store.getSession(id)).toBeNull();
    });
  });
}
