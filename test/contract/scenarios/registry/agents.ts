import { describe, expect, it } from 'vitest';
import type { RegisteredAgent } from '../../../../src/core/ports/agent-registry.js';
import { CLOCK_SLACK_MS, expectCode, registration, type ContractContext } from '../../contract-helpers.js';

/** The entries of these agent names only: other scenarios share the registry. */
async function listed(ctx: ContractContext, ...names: string[]): Promise<RegisteredAgent[]> {
  return (await ctx.registry.listAgents()).filter((agent) => names.includes(agent.name));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function registryScenarios(ctx: ContractContext): void {
  describe('agents', () => {
    it('lists each (name, version) by name with its workers', async () => {
      const [alpha, beta] = [ctx.id('alpha'), ctx.id('beta')];
      const [w1, w2] = [ctx.id('worker'), ctx.id('worker')];
      const before = ctx.now();
      await ctx.registry.registerAgents(w1, [registration(beta, { tools: [] }), registration(alpha, { provider: 'anthropic', model: 'claude', tools: ['a', 'b'] })]);
      await ctx.registry.registerAgents(w2, [registration(alpha, { provider: 'anthropic', model: 'claude', tools: ['a', 'b'] }), registration(beta, { version: 'v2' })]);
      const agents = await listed(ctx, alpha, beta);
      expect(agents.map((agent) => [agent.name, agent.version, agent.workers.map((worker) => worker.workerId)])).toEqual([
        [alpha, 'v1', [w1, w2].sort()],
        [beta, 'v1', [w1]],
        [beta, 'v2', [w2]],
      ]);
      expect(agents[0]).toMatchObject({ provider: 'anthropic', model: 'claude', tools: ['a', 'b'] });
      expect(agents[1]?.tools).toEqual([]);
      const seen = agents[0]!.workers[0]!;
      expect(seen.seenAt.getTime()).toBeGreaterThanOrEqual(before - CLOCK_SLACK_MS);
      expect(seen.registeredAt).toBeInstanceOf(Date);
    });

    it('replaces a worker\'s agents when it registers again', async () => {
      const [kept, dropped, added] = [ctx.id('kept'), ctx.id('dropped'), ctx.id('added')];
      const worker = ctx.id('worker');
      await ctx.registry.registerAgents(worker, [registration(kept), registration(dropped)]);
      await ctx.registry.registerAgents(worker, [registration(kept, { version: 'v9' }), registration(added)]);
      expect((await listed(ctx, kept, dropped, added)).map((agent) => `${agent.name}@${agent.version}`)).toEqual([`${added}@v1`, `${kept}@v9`]);
      await ctx.registry.registerAgents(worker, []);
      expect(await listed(ctx, kept, dropped, added)).toEqual([]);
    });

    it('touches a worker, and says when it has no rows', async () => {
      const name = ctx.id('touched');
      const worker = ctx.id('worker');
      expect(await ctx.registry.touchWorker(worker)).toBe(false);
      await ctx.registry.registerAgents(worker, [registration(name)]);
      const first = (await listed(ctx, name))[0]!.workers[0]!;
      await sleep(20);
      expect(await ctx.registry.touchWorker(worker)).toBe(true);
      const second = (await listed(ctx, name))[0]!.workers[0]!;
      expect(second.seenAt.getTime()).toBeGreaterThan(first.seenAt.getTime());
      expect(second.registeredAt).toEqual(first.registeredAt);
    });

    it('marks a worker that leaves stopped, keeps it listed and leaves the others; registering again clears it', async () => {
      const name = ctx.id('shared');
      const [leaving, staying] = [ctx.id('worker'), ctx.id('worker')].sort();
      await ctx.registry.registerAgents(leaving!, [registration(name)]);
      await ctx.registry.registerAgents(staying!, [registration(name)]);
      await ctx.registry.unregisterWorker(leaving!);
      const stopped = (await listed(ctx, name))[0]!.workers;
      await ctx.registry.unregisterWorker(leaving!);
      expect((await listed(ctx, name))[0]!.workers).toEqual(stopped);
      expect(stopped.map((worker) => [worker.workerId, worker.stoppedAt instanceof Date])).toEqual([
        [leaving, true],
        [staying, false],
      ]);
      await ctx.registry.registerAgents(leaving!, [registration(name)]);
      expect((await listed(ctx, name))[0]!.workers.map((worker) => worker.stoppedAt)).toEqual([null, null]);
    });

    it('prunes the workers not seen within the bound', async () => {
      const [old, fresh] = [ctx.id('old'), ctx.id('fresh')];
      const [gone, alive] = [ctx.id('worker'), ctx.id('worker')];
      await ctx.registry.registerAgents(gone, [registration(old), registration(fresh)]);
      await sleep(600);
      await ctx.registry.registerAgents(alive, [registration(fresh)]);
      expect(await ctx.registry.pruneWorkers(300)).toBeGreaterThanOrEqual(1);
      expect((await listed(ctx, old, fresh)).map((agent) => [agent.name, agent.workers.map((worker) => worker.workerId)])).toEqual([[fresh, [alive]]]);
      expect(await ctx.registry.touchWorker(gone)).toBe(false);
    });

    it.each([
      ['a bad agent name', [registration('a b')]],
      ['a name twice', [registration('twice'), registration('twice')]],
      ['a missing version', [{ ...registration('x'), version: '' }]],
      ['tools that are not names', [{ ...registration('x'), tools: [1] }]],
      ['no array', 'x'],
    ])('refuses %s with input.invalid and keeps the worker\'s rows', async (_label, agents) => {
      const name = ctx.id('before');
      const worker = ctx.id('worker');
      await ctx.registry.registerAgents(worker, [registration(name)]);
      await expectCode(ctx.registry.registerAgents(worker, agents as never), 'input.invalid');
      expect((await listed(ctx, name)).length).toBe(1);
    });

    it('refuses a bad worker id or prune bound with input.invalid', async () => {
      await expectCode(ctx.registry.registerAgents('', []), 'input.invalid');
      await expectCode(ctx.registry.touchWorker(42 as never), 'input.invalid');
      await expectCode(ctx.registry.unregisterWorker(null as never), 'input.invalid');
      await expectCode(ctx.registry.pruneWorkers(-1), 'input.invalid');
    });
  });
}
