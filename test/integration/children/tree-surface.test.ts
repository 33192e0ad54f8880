/**
 * How a tree of child sessions reads from outside (docs/child-sessions.md, "Reading the tree"), on
 * the scripted model with one in-process worker. The tree: `root` (agent `boss`) waits for two `mid`
 * children; the first waits for a `leaf` grandchild, the second holds its model call.
 *
 * - `queue.sessions.children(id)`: the children in spawn order with their live status, then their
 *   delivered outcome;
 * - `queue.stats(id)`: `status` `waiting_for_children` while waiting, and `tree` (parent, root,
 *   depth, children) at each level;
 * - `loopfleet stats <session>` prints the children lines (and `child of …` for a child), `--json`
 *   the same tree; `loopfleet history <child>` (a real CLI process) prints `# child of …` on stderr
 *   and the history alone on stdout, and nothing of the kind for a root.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess, runCliProcess } from '../../support/run-cli-process.js';
import { ChildrenFleet, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [
  { name: 'boss', subagents: ['mid'] },
  { name: 'mid', subagents: ['leaf'] },
  { name: 'leaf' },
];

describe('child sessions: children(), stats().tree and the CLI', () => {
  let cf: ChildrenFleet;
  let env: NodeJS.ProcessEnv;
  const root = 'tree-1';
  const mid1 = `${root}:sub:call_1_0`;
  const mid2 = `${root}:sub:call_1_1`;
  const leaf = `${mid1}:sub:call_1_0`;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_surface', AGENTS);
    const { config } = cf.fleet;
    env = { DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, LOOPFLEET_QUEUE: config.queueName, LLM_PROVIDER: 'scripted' };
  });

  afterAll(async () => {
    await cf?.close();
  });

  it('lists the tree while it runs and once it is done, through the client and the CLI', async () => {
    const handle = await cf.send(root, 'boss', `${spawnTag('mid', spawnTag('leaf', 'leaf task'))} ${spawnTag('mid', 'hold:surface')}`);
    // The first branch done, the second held.
    await cf.fleet.waitFor('the first mid to complete', async () => ((await cf.fleet.store.getInput(mid1, 1))?.status === 'done' ? true : undefined));
    await cf.asked(mid2);

    expect(await cf.queue.sessions.children(root)).toEqual([
      { sessionId: mid1, agent: 'mid', toolCallId: 'call_1_0', status: 'completed' },
      { sessionId: mid2, agent: 'mid', toolCallId: 'call_1_1', status: 'running' },
    ]);
    const rootStats = await cf.queue.stats(root);
    expect(rootStats.status).toBe('waiting_for_children');
    expect(rootStats.tree).toEqual({ parentSessionId: null, rootSessionId: root, depth: 0, children: await cf.queue.sessions.children(root) });

    const running = await runCliInProcess(['stats', root], env);
    expect(running.code).toBe(0);
    const lines = running.out.split('\n');
    expect(lines[0]).toBe(`session ${root}  agent boss  status waiting_for_children`);
    expect(lines).toContain('children 2');
    expect(lines).toContain(`  ${mid1} mid completed (call call_1_0)`);
    expect(lines).toContain(`  ${mid2} mid running (call call_1_1)`);
    expect(lines.indexOf(`  ${mid1} mid completed (call call_1_0)`)).toBeLessThan(lines.indexOf(`  ${mid2} mid running (call call_1_1)`));
    expect(lines.some((line) => line.startsWith('child of'))).toBe(false);

    cf.model.gates.open('surface');
    await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Done: Done: Echo: leaf task | held surface' });
    expect((await cf.queue.sessions.children(root)).map((child) => child.status)).toEqual(['completed', 'completed']);
    expect(await cf.queue.sessions.children(leaf)).toEqual([]);
    expect((await cf.queue.stats(mid1)).tree).toEqual({
      parentSessionId: root,
      rootSessionId: root,
      depth: 1,
      children: [{ sessionId: leaf, agent: 'leaf', toolCallId: 'call_1_0', status: 'completed' }],
    });
    expect((await cf.queue.stats(leaf)).tree).toEqual({ parentSessionId: mid1, rootSessionId: root, depth: 2, children: [] });

    const midStats = await runCliInProcess(['stats', mid1], env);
    expect(midStats.code).toBe(0);
    expect(midStats.out.split('\n')).toEqual(
      expect.arrayContaining([`child of ${root}  depth 1  root ${root}`, 'children 1', `  ${leaf} leaf completed (call call_1_0)`]),
    );
    const json = await runCliInProcess(['stats', leaf, '--json'], env);
    expect(JSON.parse(json.out)).toMatchObject({ sessionId: leaf, agent: 'leaf', tree: { parentSessionId: mid1, rootSessionId: root, depth: 2, children: [] } });

    // A real CLI process: the header on stderr, stdout the history only.
    const [childHistory, rootHistory] = await Promise.all([runCliProcess(['history', leaf], env), runCliProcess(['history', root], env)]);
    expect(childHistory.code).toBe(0);
    expect(childHistory.stderr).toBe(`# child of ${mid1} (call call_1_0, agent leaf, depth 2, root ${root})\n`);
    expect(childHistory.stdout).toContain('user: leaf task');
    expect(childHistory.stdout).toContain('assistant: Echo: leaf task');
    expect(childHistory.stdout).not.toContain('child of');
    expect(rootHistory.code).toBe(0);
    expect(rootHistory.stderr).toBe('');
    expect(rootHistory.stdout).toContain('assistant: Done: Done: Echo: leaf task | held surface');
  });
});
