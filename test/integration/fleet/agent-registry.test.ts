import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredAgent } from '../../../src/core/ports/agent-registry.js';
import type { SessionQueue } from '../../../src/producer/session-queue.js';
import { PostgresAgentRegistry } from '../../../src/store/agents/postgres-agent-registry.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import type { FleetFixture } from '../../support/fleet-fixture.js';
import { runCliInProcess } from '../../support/run-cli-process.js';
import { expectRawRefusal, inboxRowCounts, openProducingFleet, type ProducingFleet } from './fixtures/raw-refusals.js';

/**
 * The agent registry end to end (docs/client.md, "Choosing an agent"): a worker registers the agents
 * it serves and is marked stopped on close; an add or a create naming an agent no worker registered, or another
 * agent than its session's, is refused with nothing written — through `SessionQueue` and the raw path.
 */
describe('the agent registry and agent refusals', () => {
  let fleet: FleetFixture;
  let worker: RunningWorker;
  let registry: PostgresAgentRegistry;
  let queue: SessionQueue;
  let producing: ProducingFleet;

  beforeAll(async () => {
    producing = await openProducingFleet('agent_registry', [{ name: 'default' }, { name: 'support', systemPrompt: 'You help.' }]);
    ({ fleet, worker, queue } = producing);
    registry = new PostgresAgentRegistry(fleet.pool);
  });

  afterAll(async () => {
    await producing?.close();
  });

  const rowCounts = () => inboxRowCounts(fleet.pool);

  const workersOf = (agents: RegisteredAgent[], name: string) => agents.find((agent) => agent.name === name)?.workers.map((entry) => entry.workerId) ?? [];

  it('lists the agents a started worker serves, with their version, model and tools', async () => {
    const agents = await registry.listAgents();
    expect(agents.map((agent) => agent.name)).toEqual(['default', 'support']);
    expect(agents[0]).toMatchObject({ version: expect.stringMatching(/^[0-9a-f]{12}$/), provider: 'scripted', tools: expect.arrayContaining(['current_time']) });
    expect(workersOf(agents, 'support')).toEqual([worker.workerId]);
  });

  it('creates a session on a registered agent and runs the adds that name it', async () => {
    const created = await queue.sessions.create({ id: 'on-support', agent: 'support' });
    expect(created.agent).toBe('support');
    const handle = await queue.add('send', { sessionId: 'on-support', agent: 'support', input: 'hi' });
    await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed' });
    expect((await fleet.store.getInput('on-support', 1))?.result?.agent).toMatchObject({ name: 'support' });
    const unnamed = await queue.add('send', { sessionId: 'on-support', input: 'again' });
    expect(unnamed.seq).toBe(2);
    // An add that creates its session puts it on the agent it names.
    await queue.add('send', { sessionId: 'added-on-support', agent: 'support', input: 'x' });
    expect((await queue.sessions.get('added-on-support'))?.agent).toBe('support');
  });

  it('refuses an unknown agent with agent.not_found and a different one with session.agent_mismatch, writing nothing', async () => {
    await queue.add('send', { sessionId: 'on-default', input: 'first' });
    const before = await rowCounts();
    await expect(queue.sessions.create({ id: 'unknown-agent', agent: 'nobody' })).rejects.toMatchObject({ code: 'agent.not_found' });
    await expect(queue.add('send', { sessionId: 'unknown-agent', agent: 'nobody', input: 'x' })).rejects.toMatchObject({ code: 'agent.not_found' });
    await expect(queue.add('send', { sessionId: 'on-default', agent: 'support', input: 'x' })).rejects.toMatchObject({ code: 'session.agent_mismatch' });
    await expect(queue.add('resume', { sessionId: 'on-default', agent: 'support' })).rejects.toMatchObject({ code: 'session.agent_mismatch' });
    await expect(queue.add('send', { sessionId: 'on-default', agent: 'bad name', input: 'x' })).rejects.toMatchObject({ code: 'input.invalid' });
    expect(await rowCounts()).toEqual(before);
  });

  it.each([
    ['a bad data.agent', 'input.invalid', { sessionId: 'raw-bad-agent', agent: 'a/b', input: 'x' }],
    ['a data.agent no worker registered', 'agent.not_found', { sessionId: 'raw-unknown-agent', agent: 'nobody', input: 'x' }],
    ["a data.agent other than the session's", 'session.agent_mismatch', { sessionId: 'raw-on-default', agent: 'support', input: 'x' }],
  ] as const)('a raw send with %s fails once with "%s: …", nothing written', async (_label, code, data) => {
    await queue.add('send', { sessionId: 'raw-on-default', input: 'first' });
    await expectRawRefusal(producing, data, code);
  });

  it('a raw send naming the agent creates its session on it', async () => {
    const outcome = await producing.producer.run('send', { sessionId: 'raw-on-support', agent: 'support', input: 'x' });
    expect(outcome.value).toMatchObject({ seq: 1 });
    expect((await queue.sessions.get('raw-on-support'))?.agent).toBe('support');
  });

  it('loopfleet agents prints the registry as a table and as JSON lines', async () => {
    const env = { DATABASE_URL: fleet.config.databaseUrl, DATABASE_POOLER: fleet.config.worker.pooler, REDIS_URL: fleet.config.redisUrl, LOOPFLEET_QUEUE: fleet.config.queueName };
    const table = await runCliInProcess(['agents'], env);
    expect(table).toMatchObject({ code: 0, err: '' });
    const lines = table.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AGENT +VERSION +PROVIDER +MODEL +TOOLS +WORKERS \(LAST SEEN, OR STOPPED\)$/);
    expect(lines.slice(1).map((line) => line.split(/ +/)[0])).toEqual(['default', 'support']);
    expect(lines[2]).toMatch(new RegExp(`^support +[0-9a-f]{12} +scripted +\\S+ +\\S+ +${worker.workerId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d{4}-\\d\\d-\\d\\dT`));
    const json = await runCliInProcess(['agents', '--json'], env);
    expect(json.code).toBe(0);
    const agents = json.out.trimEnd().split('\n').map((line) => JSON.parse(line) as RegisteredAgent);
    expect(agents.map((agent) => [agent.name, agent.workers.map((entry) => entry.workerId)])).toEqual([
      ['default', [worker.workerId]],
      ['support', [worker.workerId]],
    ]);
  });

  it('loopfleet stats shows the session\'s agent and the agent that ran each input', async () => {
    const env = { DATABASE_URL: fleet.config.databaseUrl, DATABASE_POOLER: fleet.config.worker.pooler, REDIS_URL: fleet.config.redisUrl, LOOPFLEET_QUEUE: fleet.config.queueName };
    const handle = await queue.add('send', { sessionId: 'stats-on-support', agent: 'support', input: 'hi' });
    await handle.result({ timeoutMs: 20_000 });
    const version = (await registry.listAgents()).find((agent) => agent.name === 'support')!.version;
    const text = await runCliInProcess(['stats', 'stats-on-support'], env);
    expect(text).toMatchObject({ code: 0, err: '' });
    expect(text.out).toMatch(/^session stats-on-support {2}agent support {2}status idle\ninputs 1 \(pending 0, running 0, waiting 0, done 1, failed 0, cancelled 0\)\n/);
    expect(text.out).toContain(`\n#1 send done support@${version}\n`);
    expect(text.out).toMatch(/\ntokens \d+ \(prompt \d+, completion \d+, cache read \d+, cache write \d+, reasoning \d+\)\n/);
    const json = await runCliInProcess(['stats', 'stats-on-support', '--json'], env);
    expect(JSON.parse(json.out)).toMatchObject({ sessionId: 'stats-on-support', agent: 'support', runs: [{ seq: 1, kind: 'send', status: 'done', agent: { name: 'support', version } }] });
    expect(await runCliInProcess(['stats', 'no-such-session'], env)).toMatchObject({ code: 3, err: expect.stringContaining('[session.not_found]') });
  });

  it('a worker that closes is marked stopped: its agents are still accepted (a restart refuses nothing) until its rows are pruned', async () => {
    const second = await fleet.startWorker({ agents: [{ name: 'billing' }] });
    expect(workersOf(await registry.listAgents(), 'billing')).toEqual([second.workerId]);
    await second.close();
    const [billing] = (await registry.listAgents()).filter((agent) => agent.name === 'billing');
    expect(billing!.workers).toMatchObject([{ workerId: second.workerId, stoppedAt: expect.any(Date) }]);
    // Accepted while no worker runs it: the input waits in the inbox for one.
    await queue.sessions.create({ id: 'while-billing-restarts', agent: 'billing' });
    expect(await registry.pruneWorkers(0)).toBeGreaterThanOrEqual(1);
    await expect(queue.sessions.create({ id: 'after-billing-pruned', agent: 'billing' })).rejects.toMatchObject({ code: 'agent.not_found' });
  });
});
