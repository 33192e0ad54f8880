/**
 * `spawn_agent` with `wait: false` (docs/child-sessions.md), on the scripted model with one
 * in-process worker:
 *
 * - the call returns `{"childSessionId": …, "status": "started"}` at once and the parent's input
 *   completes while the child still runs; the child's answer then arrives as a
 *   `<subagent_result …>` user message running as an input of its own (the parent is idle), with
 *   `subagent_finished` on the parent's stream, once;
 * - while the parent's input is still open (parked on a `wait: true` sibling), the early answer
 *   waits as a steer and is folded into that input when it runs on: the parent's next request shows
 *   the sibling's result and the `<subagent_result>` message, and the input finishes once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildrenFleet, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [{ name: 'lead', subagents: ['helper'] }, { name: 'helper' }];

describe('child sessions: wait false', () => {
  let cf: ChildrenFleet;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_nowait', AGENTS);
  });

  afterAll(async () => {
    await cf?.close();
  });

  it('returns the child id at once; the answer arrives later as a message run as its own input', async () => {
    const parent = 'nw-1';
    const child = `${parent}:sub:call_1_0`;
    const handle = await cf.send(parent, 'lead', spawnTag('helper', 'hold:nw-1', { wait: false }));
    const first = await handle.result({ timeoutMs: 20_000 });
    const started = JSON.stringify({ childSessionId: child, status: 'started', note: 'the result will arrive as a <subagent_result> message' });
    expect(first).toMatchObject({ status: 'completed', finalText: `Done: ${started}`, toolCalls: 1 });
    // The parent is done with its input while the child still runs.
    expect((await cf.fleet.store.getInput(child, 1))?.status).toBe('running');
    expect(first.usage.children).toBeUndefined();

    cf.model.gates.open('nw-1');
    const [, delivered] = await cf.fleet.waitForSessionFinished(parent, 2);
    expect(delivered).toMatchObject({ seq: 2, kind: 'child', mode: 'steer', inputId: 'child:call_1_0', status: 'done', steeredInto: null });
    const message = `<subagent_result child="${child}" agent="helper" status="completed">\nheld nw-1\n</subagent_result>`;
    expect(delivered!.result).toMatchObject({ status: 'completed', finalText: `Echo: ${message}` });
    expect(cf.model.of(parent).map((request) => [request.lastRole, request.lastText])).toEqual([
      ['user', spawnTag('helper', 'hold:nw-1', { wait: false })],
      ['tool', started],
      ['user', message],
    ]);

    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'subagent_started')).toMatchObject([{ childSessionId: child, wait: false }]);
    expect(events.filter((event) => event.type === 'subagent_finished')).toMatchObject([{ childSessionId: child, toolCallId: 'call_1_0', status: 'completed' }]);
    expect(events.filter((event) => event.type === 'input_finished').map((event) => event.inputSeq)).toEqual([1, 2]);
    // Published after the first input finished: the answer came later.
    const types = events.map((event) => event.type);
    expect(types.indexOf('subagent_finished')).toBeGreaterThan(types.indexOf('input_finished'));
    expect((await cf.queue.sessions.children(parent)).map((row) => row.status)).toEqual(['completed']);
  });

  it('an answer arriving while the parent input is open is folded into it when it runs on', async () => {
    const parent = 'nw-2';
    const quick = `${parent}:sub:call_1_0`;
    const slow = `${parent}:sub:call_1_1`;
    const handle = await cf.send(parent, 'lead', `${spawnTag('helper', 'quick', { wait: false })} ${spawnTag('helper', 'hold:nw-2')}`);
    // The quick child's answer is in the inbox as a steer while the parent waits for the slow one.
    await cf.fleet.waitFor('the quick answer in the inbox', async () => {
      const inputs = await cf.fleet.store.listInputs(parent, { limit: 10 });
      return inputs.find((input) => input.inputId === 'child:call_1_0');
    });
    // A fast child may answer before the parent has parked on the slow one: wait for the park.
    await cf.fleet.waitFor('the parent input parked', async () => ((await cf.fleet.store.getInput(parent, 1))?.status === 'waiting' ? true : undefined));
    expect((await cf.fleet.store.getInput(quick, 1))?.status).toBe('done');

    cf.model.gates.open('nw-2');
    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result.status).toBe('completed');
    const inputs = await cf.fleet.waitForSessionFinished(parent, 3);
    const steer = inputs.find((input) => input.inputId === 'child:call_1_0');
    expect(steer).toMatchObject({ kind: 'child', mode: 'steer', status: 'done', steeredInto: 1 });

    // One request of the parent after the wake: the sibling's result and the folded answer in it.
    const after = cf.model.of(parent).slice(1);
    expect(after).toHaveLength(1);
    const message = `<subagent_result child="${quick}" agent="helper" status="completed">\nEcho: quick\n</subagent_result>`;
    expect(after[0]).toMatchObject({ lastRole: 'user', lastText: message });
    expect(result.finalText).toBe(`Echo: ${message}`);
    const history = await cf.fleet.transcript(parent);
    expect(history.filter((line) => line.startsWith('tool: '))).toEqual([expect.stringContaining(`"childSessionId":"${quick}"`), 'tool: held nw-2']);

    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'input_finished' && event.inputSeq === 1)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'subagent_finished').map((event) => event.childSessionId).sort()).toEqual([quick, slow]);
  });
});
