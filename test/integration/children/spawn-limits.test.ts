/**
 * The limits of `spawn_agent` (docs/child-sessions.md, "Refusals"), on the scripted model with one
 * in-process worker. A refused call is a tool error the model sees (`isError`), the run goes on and
 * completes, and no child session is created for it:
 *
 * - depth: an agent with `maxSpawnDepth: 2` spawning itself — depth 1 and 2 are created, the call at
 *   depth 2 (a child at depth 3) is refused;
 * - fan-out: `maxChildrenPerInput: 2` — three spawns in one round start two children, the third is
 *   refused, as is an agent not in `subagents`; the next input may start children again (per input).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildrenFleet, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [
  { name: 'deep', subagents: ['deep'], maxSpawnDepth: 2 },
  { name: 'fan', subagents: ['reader'], maxChildrenPerInput: 2 },
  { name: 'reader' },
];

describe('child sessions: depth and fan-out limits', () => {
  let cf: ChildrenFleet;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_limits', AGENTS);
  });

  afterAll(async () => {
    await cf?.close();
  });

  /**
   * The tool messages of a session's history, content and error flag, in call order (a refusal is
   * committed at once, a child's answer when it comes: the rows are in commit order, the model is
   * shown them in call order).
   */
  async function toolMessages(sessionId: string): Promise<{ text: unknown; isError: boolean }[]> {
    const rows = await cf.fleet.store.loadHistory(sessionId);
    const tools = rows.flatMap((row) => (row.message.role === 'tool' ? [row.message] : []));
    tools.sort((a, b) => a.toolCallId.localeCompare(b.toolCallId));
    return tools.map((message) => ({ text: message.content, isError: message.isError === true }));
  }

  /** How many sessions have `parentSessionId` as their parent. */
  async function childRows(parentSessionId: string): Promise<number> {
    return Number((await cf.fleet.pool.query('SELECT count(*)::int AS n FROM sessions WHERE parent_session_id = $1', [parentSessionId])).rows[0].n);
  }

  it('refuses a child deeper than maxSpawnDepth; the deepest session answers with the error and the tree completes', async () => {
    const root = 'depth-0';
    const depth1 = `${root}:sub:call_1_0`;
    const depth2 = `${depth1}:sub:call_1_0`;
    const handle = await cf.send(root, 'deep', spawnTag('deep', spawnTag('deep', spawnTag('deep', 'too deep'))));
    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result.status).toBe('completed');
    expect(result.finalText).toMatch(/^Done: Done: Done: Error: a sub-agent here would be at depth 3, deeper than the 2 allowed/);

    // The refused call: an error result the model saw; nothing created for it.
    expect(await toolMessages(depth2)).toEqual([{ text: expect.stringMatching(/^Error: a sub-agent here would be at depth 3/), isError: true }]);
    expect([await childRows(root), await childRows(depth1), await childRows(depth2)]).toEqual([1, 1, 0]);
    expect((await cf.queue.stats(depth2)).tree).toMatchObject({ depth: 2, parentSessionId: depth1, rootSessionId: root, children: [] });
    expect(await toolMessages(root)).toEqual([{ text: expect.stringMatching(/^Done: Done: Error: /), isError: false }]);
    // Each session ran on: one request with the task, one answering its tool result.
    for (const id of [root, depth1, depth2]) expect(cf.model.of(id).map((request) => request.lastRole)).toEqual(['user', 'tool']);
  });

  it('refuses a spawn past maxChildrenPerInput and an agent not in subagents; the next input may start children again', async () => {
    const parent = 'fan-1';
    const input = [spawnTag('reader', 'A'), spawnTag('reader', 'B'), spawnTag('reader', 'C'), spawnTag('nobody', 'D')].join(' ');
    const handle = await cf.send(parent, 'fan', input);
    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result.status).toBe('completed');
    expect(await toolMessages(parent)).toEqual([
      { text: 'Echo: A', isError: false },
      { text: 'Echo: B', isError: false },
      { text: expect.stringMatching(/^Error: this input already started 2 sub-agents/), isError: true },
      // The tool's schema names the agents it may start: another is invalid arguments.
      { text: expect.stringMatching(/^Error: invalid arguments for tool "spawn_agent": .*allowed values: "reader"/), isError: true },
    ]);
    // The model saw the four results in call order.
    expect(result.finalText).toMatch(/^Done: Echo: A \| Echo: B \| Error: this input already started 2 sub-agents[^|]* \| Error: invalid arguments/);
    expect(await childRows(parent)).toBe(2);
    expect((await cf.queue.sessions.children(parent)).map((child) => [child.sessionId, child.status])).toEqual([
      [`${parent}:sub:call_1_0`, 'completed'],
      [`${parent}:sub:call_1_1`, 'completed'],
    ]);
    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'subagent_started')).toHaveLength(2);

    // The limit is per input: the next input of the session starts a child again.
    const next = await cf.queue.add('send', { sessionId: parent, input: spawnTag('reader', 'E') });
    await expect(next.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Done: Echo: E' });
    expect(await childRows(parent)).toBe(3);
  });
});
