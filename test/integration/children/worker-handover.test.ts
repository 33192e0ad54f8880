/**
 * A parent's worker stops while its children run (docs/child-sessions.md, "The lifecycle"): the
 * parent is parked (`waiting`, no worker holds it), its two children hold their model calls on the
 * only worker, and that worker is closed gracefully (`worker.close()`, a short grace: the held runs
 * are aborted and handed back). A second worker, started after, runs the children again and then the
 * parent; the parent input finishes once, with both answers in call order. Each worker has its own
 * scripted model, so the test sees which worker asked what.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildrenFleet, ChildrenLlm, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [{ name: 'lead', subagents: ['reader'] }, { name: 'reader' }];

describe('child sessions: the worker of a waiting parent stops', () => {
  let cf: ChildrenFleet;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_handover', AGENTS, { workers: 0 });
  });

  afterAll(async () => {
    await cf?.close();
  });

  it('another worker finishes the children and the parent; the parent completes once', async () => {
    const first = await cf.startWorker();
    const parent = 'ho-1';
    const a = `${parent}:sub:call_1_0`;
    const b = `${parent}:sub:call_1_1`;
    const handle = await cf.send(parent, 'lead', `${spawnTag('reader', 'hold:ho-a')} ${spawnTag('reader', 'hold:ho-b')}`);
    await Promise.all([cf.inputStatus(parent, 1, 'waiting'), cf.asked(a), cf.asked(b)]);

    await first.close({ graceMs: 300 });
    // Handed back, not ended: nothing was delivered, the parent still waits.
    for (const id of [a, b]) expect((await cf.fleet.store.getInput(id, 1))?.status).toMatch(/^(pending|running)$/);
    expect((await cf.fleet.store.getInput(parent, 1))?.status).toBe('waiting');
    expect((await cf.fleet.store.listInputs(parent, { limit: 10 })).map((input) => input.kind)).toEqual(['send']);

    const second = new ChildrenLlm();
    second.gates.open('ho-a');
    second.gates.open('ho-b');
    await cf.startWorker(second);
    const result = await handle.result({ timeoutMs: 25_000 });
    expect(result).toMatchObject({ status: 'completed', finalText: 'Done: held ho-a | held ho-b', toolCalls: 2 });

    // The first worker asked for the parent's first reply and both children's (held, then aborted);
    // the second ran both children again and the parent on, once.
    expect(cf.model.requests.map((request) => request.sessionId).sort()).toEqual([parent, a, b].sort());
    expect(second.of(a)).toHaveLength(1);
    expect(second.of(b)).toHaveLength(1);
    expect(second.of(parent).map((request) => request.lastRole)).toEqual(['tool']);
    await cf.fleet.waitForSessionFinished(parent, 3);
    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'input_finished' && event.inputSeq === 1)).toMatchObject([{ status: 'completed' }]);
    expect(events.filter((event) => event.type === 'subagent_started')).toHaveLength(2);
    expect(events.filter((event) => event.type === 'subagent_finished')).toHaveLength(2);
    expect((await cf.queue.sessions.children(parent)).map((row) => row.status)).toEqual(['completed', 'completed']);
  });
});
