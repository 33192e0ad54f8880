/**
 * What a parent gets from a child that does not simply complete (docs/child-sessions.md, "What the
 * parent's call gets back"), on the scripted model with one in-process worker:
 *
 * - a child that asks a person (`request_user_input`) delivers nothing yet: the parent stays
 *   `waiting_for_children`; once `queue.submitInput(child, …)` answers it, the child completes and
 *   the parent completes with the child's answer, once;
 * - a child that fails (its structured output invalid twice: `failed`, `output.invalid`) and one
 *   whose model fails non-retryably (`degraded`, `llm.non_retryable`): the parent's calls get
 *   `[sub-agent <id> ended failed: output.invalid]` and `[… ended degraded: …]`, each marked as an
 *   error, and the parent goes on and completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildrenFleet, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [
  { name: 'lead', subagents: ['helper', 'strict'] },
  { name: 'helper' },
  // Its replies must be `{"answer": "…"}`; the scripted model's echo never is.
  { name: 'strict', responseFormat: { name: 'answer', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } },
];

describe('child sessions: a child that asks a person, a child that fails', () => {
  let cf: ChildrenFleet;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_outcomes', AGENTS);
  });

  afterAll(async () => {
    await cf?.close();
  });

  it('a child waiting for input keeps its parent waiting; its answer completes both', async () => {
    const parent = 'ask-p';
    const child = `${parent}:sub:call_1_0`;
    const handle = await cf.send(parent, 'lead', spawnTag('helper', '[tool:request_user_input {"prompt":"Which colour?"}]'));

    await cf.fleet.waitFor('the child to ask', async () => {
      const input = await cf.fleet.store.getInput(child, 1);
      return input?.result?.status === 'waiting_for_input' ? input : undefined;
    });
    // The question is no answer: nothing delivered, the parent keeps waiting.
    await cf.inputStatus(parent, 1, 'waiting');
    const stats = await cf.queue.stats(parent);
    expect(stats.status).toBe('waiting_for_children');
    expect(stats.tree.children).toEqual([{ sessionId: child, agent: 'helper', toolCallId: 'call_1_0', status: 'waiting_for_input' }]);
    expect((await cf.fleet.store.listInputs(parent, { limit: 10 })).map((input) => input.kind)).toEqual(['send']);
    expect(cf.model.of(parent)).toHaveLength(1);

    const session = await cf.queue.sessions.get(child);
    const interaction = session?.pending?.interactions[0];
    expect(interaction?.prompt).toBe('Which colour?');
    const answered = await cf.queue.submitInput(child, interaction!.interactionId, 'blue');
    await expect(answered.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Done: blue' });

    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result).toMatchObject({ status: 'completed', finalText: 'Done: Done: blue', toolCalls: 1 });
    expect(cf.model.of(parent).map((request) => request.lastRole)).toEqual(['user', 'tool']);
    await cf.fleet.waitForSessionFinished(parent, 2);
    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'input_finished' && event.inputSeq === 1)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'subagent_finished')).toMatchObject([{ childSessionId: child, status: 'completed' }]);
    expect((await cf.queue.stats(parent)).status).not.toBe('waiting_for_children');
    expect((await cf.queue.sessions.children(parent)).map((row) => row.status)).toEqual(['completed']);
  });

  it('children that fail: each call gets an error result naming it, and the parent completes', async () => {
    const parent = 'fail-p';
    const failed = `${parent}:sub:call_1_0`;
    const degraded = `${parent}:sub:call_1_1`;
    const handle = await cf.send(parent, 'lead', [spawnTag('strict', 'not json'), spawnTag('helper', 'fail:now'), spawnTag('helper', 'fine')].join(' '));
    const result = await handle.result({ timeoutMs: 20_000 });
    const failedText = `[sub-agent ${failed} ended failed: output.invalid]`;
    const degradedText = `[sub-agent ${degraded} ended degraded: llm.non_retryable]`;
    expect(result).toMatchObject({ status: 'completed', finalText: `Done: ${failedText} | ${degradedText} | Echo: fine` });
    // Failed children's calls do not count, whether their results came before the park or after it.
    expect(result.toolCalls).toBe(1);
    await expect(cf.fleet.store.getInput(failed, 1)).resolves.toMatchObject({ status: 'failed', errorCode: 'output.invalid' });
    await expect(cf.fleet.store.getInput(degraded, 1)).resolves.toMatchObject({ result: { status: 'degraded' } });

    const tools = (await cf.fleet.store.loadHistory(parent)).flatMap((row) => (row.message.role === 'tool' ? [row.message] : []));
    expect(tools.map((message) => [message.toolCallId, message.content, message.isError === true]).sort()).toEqual([
      ['call_1_0', failedText, true],
      ['call_1_1', degradedText, true],
      ['call_1_2', 'Echo: fine', false],
    ]);
    expect(cf.model.of(parent).map((request) => request.lastRole)).toEqual(['user', 'tool']);
    await cf.fleet.waitForSessionFinished(parent, 4);
    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'input_finished' && event.inputSeq === 1)).toMatchObject([{ status: 'completed' }]);
    expect(events.filter((event) => event.type === 'subagent_finished').map((event) => event.status).sort()).toEqual(['completed', 'degraded', 'failed']);
    expect((await cf.queue.sessions.children(parent)).map((row) => row.status)).toEqual(['failed', 'degraded', 'completed']);
  });
});
