/**
 * Cancel and delete of a tree of child sessions (docs/child-sessions.md, "Cancel and delete"), on
 * the scripted model with two in-process workers. The tree: a `boss` waits for two `mid` children;
 * the first `mid` itself waits for a `leaf` grandchild. Every model call at the bottom holds on a
 * gate, so the whole tree is in flight.
 *
 * - `queue.cancel(boss)`: the boss input ends `cancelled` with its open calls closed
 *   `[skipped: cancelled — …]`, every child and grandchild input ends `cancelled`, and nothing is
 *   delivered to the boss afterwards (no further model call, no `subagent_finished`, no new inbox row).
 * - `queue.sessions.delete(boss)` of a finished tree: every row of the boss, children and grandchild
 *   (sessions, inputs, messages) goes, and so do their Redis event streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { ChildrenFleet, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [
  { name: 'boss', subagents: ['mid'] },
  { name: 'mid', subagents: ['leaf'] },
  { name: 'leaf' },
];

describe('child sessions: cancel and delete cascade', () => {
  let cf: ChildrenFleet;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_cancel', AGENTS, { workers: 2 });
  });

  afterAll(async () => {
    await cf?.close();
  });

  /** Starts boss → [mid (→ leaf), mid]; returns the ids. Tasks at the bottom are `hold:<gate>` or plain text. */
  async function startTree(boss: string, bottom: { leaf: string; mid: string }) {
    const mid1 = `${boss}:sub:call_1_0`;
    const mid2 = `${boss}:sub:call_1_1`;
    const leaf = `${mid1}:sub:call_1_0`;
    const handle = await cf.send(boss, 'boss', `${spawnTag('mid', spawnTag('leaf', bottom.leaf))} ${spawnTag('mid', bottom.mid)}`);
    return { handle, mid1, mid2, leaf };
  }

  it('cancel of a waiting parent cancels its children and grandchildren; nothing is delivered after', async () => {
    const boss = 'cx';
    const { handle, mid1, mid2, leaf } = await startTree(boss, { leaf: 'hold:cx-leaf', mid: 'hold:cx-mid' });
    // The whole tree is in flight: the boss and the first mid parked, the leaf and the second mid held in their model calls.
    await Promise.all([cf.inputStatus(boss, 1, 'waiting'), cf.inputStatus(mid1, 1, 'waiting'), cf.asked(leaf), cf.asked(mid2)]);
    expect((await cf.queue.stats(boss)).status).toBe('waiting_for_children');
    expect((await cf.queue.sessions.children(boss)).map((child) => child.status)).toEqual(['waiting_for_children', 'running']);

    expect(await cf.queue.cancel(boss)).toBe(true);
    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result.status).toBe('cancelled');
    for (const id of [mid1, mid2, leaf]) await cf.inputStatus(id, 1, 'cancelled');
    await cf.fleet.waitForSessionFinished(boss, 1);

    // The boss's open calls were closed by the cancel, in call order.
    const tools = (await cf.fleet.transcript(boss)).filter((line) => line.startsWith('tool: '));
    expect(tools).toHaveLength(2);
    for (const line of tools) expect(line).toMatch(/^tool: \[skipped: cancelled — .+\]$/);
    const midTools = (await cf.fleet.transcript(mid1)).filter((line) => line.startsWith('tool: '));
    expect(midTools).toEqual([expect.stringMatching(/^tool: \[skipped: cancelled — .+\]$/)]);

    // Nothing reached the boss after it ended: a late gate opening changes nothing either.
    cf.model.gates.open('cx-leaf');
    cf.model.gates.open('cx-mid');
    await cf.fleet.waitForSessionIdle(mid1, 1);
    await cf.fleet.waitForSessionIdle(mid2, 1);
    const inputs = await cf.fleet.store.listInputs(boss, { limit: 100 });
    expect(inputs.map((input) => [input.seq, input.kind, input.status])).toEqual([[1, 'send', 'cancelled']]);
    expect(cf.model.of(boss)).toHaveLength(1);
    const events = await cf.events(boss);
    expect(events.filter((event) => event.type === 'subagent_finished')).toEqual([]);
    expect(events.filter((event) => event.type === 'input_finished')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'subagent_started')).toHaveLength(2);
    expect((await cf.queue.sessions.children(boss)).map((child) => child.status)).toEqual(['cancelled', 'cancelled']);
    expect((await cf.queue.sessions.children(mid1)).map((child) => child.status)).toEqual(['cancelled']);
  });

  it('delete of a parent removes its children and grandchildren: rows and event streams', async () => {
    const boss = 'dx';
    const { handle, mid1, mid2, leaf } = await startTree(boss, { leaf: 'leaf task', mid: 'mid task' });
    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result).toMatchObject({ status: 'completed', finalText: 'Done: Done: Echo: leaf task | Echo: mid task' });
    await cf.fleet.waitForSessionFinished(boss, 3);
    await cf.fleet.waitForSessionFinished(mid1, 2);
    const ids = [boss, mid1, mid2, leaf];
    const count = async (table: string) => Number((await cf.fleet.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE session_id = ANY($1)`, [ids])).rows[0].n);
    const sessions = async () => Number((await cf.fleet.pool.query('SELECT count(*)::int AS n FROM sessions WHERE id = ANY($1)', [ids])).rows[0].n);
    const streams = () => cf.fleet.redis.exists(...ids.map((id) => eventStreamKey(cf.fleet.config.queueName, id)));
    expect([await sessions(), await count('session_inputs'), await count('messages') > 0, await streams()]).toEqual([4, 3 + 2 + 1 + 1, true, 4]);

    expect(await cf.queue.sessions.delete(boss)).toBe(true);
    expect([await sessions(), await count('session_inputs'), await count('messages'), await count('tool_calls'), await streams()]).toEqual([0, 0, 0, 0, 0]);
    expect(await cf.queue.sessions.get(leaf)).toBeNull();
    expect(await cf.queue.sessions.delete(mid1)).toBe(false);
  });
});
