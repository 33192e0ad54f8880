import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentRegistration } from '../../../src/core/ports/agent-registry.js';
import { startAgentRegistration } from '../../../src/worker/agent-registration.js';
import { InMemoryAgentRegistry } from '../../support/fakes/in-memory-agent-registry.js';

const AGENTS: AgentRegistration[] = [{ name: 'default', version: 'abc123def456', provider: 'openai', model: 'gpt-test', tools: ['current_time'] }];
const logger = pino({ level: 'silent' });

/** A worker's registration (docs/store.md, "The agent registry") on the in-memory registry, with fake timers. */
describe('startAgentRegistration', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const workers = async (registry: InMemoryAgentRegistry) => (await registry.listAgents()).flatMap((agent) => agent.workers.map((worker) => worker.workerId));
  /** The workers listed, each with whether it is marked stopped. */
  const stopped = async (registry: InMemoryAgentRegistry) =>
    (await registry.listAgents()).flatMap((agent) => agent.workers.map((worker) => [worker.workerId, worker.stoppedAt !== null]));

  it('registers before it returns, and marks itself stopped on close (once, however often called)', async () => {
    const registry = new InMemoryAgentRegistry();
    const unregister = vi.spyOn(registry, 'unregisterWorker');
    const held = await startAgentRegistration({ registry, workerId: 'w1', agents: AGENTS, logger });
    expect(await registry.listAgents()).toMatchObject([{ name: 'default', version: 'abc123def456', tools: ['current_time'], workers: [{ workerId: 'w1' }] }]);
    await Promise.all([held.close(), held.close()]);
    await held.close();
    expect(await stopped(registry)).toEqual([['w1', true]]);
    expect(unregister).toHaveBeenCalledTimes(1);
  });

  it('update registers the new list (a changed MCP tool list); once closing, it is ignored', async () => {
    const registry = new InMemoryAgentRegistry();
    const held = await startAgentRegistration({ registry, workerId: 'w1', agents: AGENTS, logger });
    await held.update([Object.assign({}, AGENTS[0]!, { tools: ['current_time', 'files__read'] })]);
    expect((await registry.listAgents())[0]?.tools).toEqual(['current_time', 'files__read']);
    const closed = held.close();
    await held.update(AGENTS);
    await closed;
    expect(await registry.listAgents()).toMatchObject([{ tools: ['current_time', 'files__read'], workers: [{ workerId: 'w1', stoppedAt: expect.any(Date) }] }]);
  });

  it('fails when the registration fails', async () => {
    const registry = new InMemoryAgentRegistry();
    vi.spyOn(registry, 'registerAgents').mockRejectedValue(new Error('database down'));
    await expect(startAgentRegistration({ registry, workerId: 'w1', agents: AGENTS, logger })).rejects.toThrow('database down');
  });

  it('touches every everyMs, registers again when its rows are gone, and keeps going after a failed touch', async () => {
    vi.useFakeTimers();
    const registry = new InMemoryAgentRegistry();
    const touch = vi.spyOn(registry, 'touchWorker');
    const held = await startAgentRegistration({ registry, workerId: 'w1', agents: AGENTS, logger, everyMs: 1_000 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(touch).toHaveBeenCalledTimes(2);
    const seen = (await registry.listAgents())[0]?.workers[0]?.seenAt.getTime();
    expect(seen).toBe(Date.now());
    // Its rows gone (pruned while the process was paused): the next touch registers again.
    await registry.registerAgents('w1', []);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await workers(registry)).toEqual(['w1']);
    touch.mockRejectedValueOnce(new Error('blip'));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(touch).toHaveBeenCalledTimes(5);
    await held.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(touch).toHaveBeenCalledTimes(5);
    expect(await stopped(registry)).toEqual([['w1', true]]);
  });

  it('a close during a touch that found its rows gone does not register the closing worker again', async () => {
    vi.useFakeTimers();
    const registry = new InMemoryAgentRegistry();
    const held = await startAgentRegistration({ registry, workerId: 'w1', agents: AGENTS, logger, everyMs: 1_000 });
    await registry.registerAgents('w1', []);
    let release = (): void => {};
    vi.spyOn(registry, 'touchWorker').mockImplementationOnce(() => new Promise((resolve) => (release = () => resolve(false))));
    await vi.advanceTimersByTimeAsync(1_000);
    const closed = held.close();
    release();
    await closed;
    expect(await workers(registry)).toEqual([]);
  });
});
