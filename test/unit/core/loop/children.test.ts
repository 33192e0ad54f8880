import { describe, expect, it } from 'vitest';
import type { ChildrenPort, ChildResultPayload } from '../../../../src/core/ports/children.js';
import type { SessionStore } from '../../../../src/core/ports/session-store.js';
import { finishingCancel } from '../../../../src/core/loop/run-outcomes.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { spawnAgentTool } from '../../../../src/core/tools/index.js';
import { childSessionId } from '../../../../src/fleet/child-session-id.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { echoTool, LoopHarness } from './loop-harness.js';

const usage = { promptTokens: 7, completionTokens: 3, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 10, llmCalls: 1 };

/** The loop's children port on the fake store, as the worker binds it (without Redis). */
function storeChildren(store: SessionStore): ChildrenPort & { spawned: string[] } {
  const spawned: string[] = [];
  return {
    spawned,
    spawn: async (request) => {
      const outcome = await store.spawnChild(Object.assign({}, request, { childSessionId: childSessionId(request.parentSessionId, request.toolCallId) }));
      if (outcome.kind === 'created') spawned.push(outcome.childSessionId);
      return outcome;
    },
  };
}

function answer(toolCallId: string, text: string, fields: Partial<ChildResultPayload> = {}): ChildResultPayload {
  return Object.assign({ toolCallId, childSessionId: childSessionId('s1', toolCallId), agent: 'reader', status: 'completed' as const, text, errorCode: null, usage, wait: true }, fields);
}

const spawn = (id: string, task: string, extra: Record<string, unknown> = {}) => ({ id, name: 'spawn_agent', arguments: Object.assign({ agent: 'reader', task }, extra) });

function parent(llm: ScriptedLlm, profile: Record<string, unknown> = {}) {
  const store = new InMemorySessionStore();
  const children = storeChildren(store);
  const harness = new LoopHarness({ llm, store, children, tools: [spawnAgentTool(['reader']), echoTool], profile: Object.assign({ subagents: ['reader'] }, profile) });
  return { harness, store, children };
}

describe('spawn_agent: child sessions from the loop', () => {
  it('two children in one round: the input parks, holds nothing, and runs on once both results are in, in call order', async () => {
    const llm = new ScriptedLlm([{ text: 'Asking two readers.', toolCalls: [spawn('c1', 'read A'), spawn('c2', 'read B')] }, { text: 'A and B combined.' }]);
    const { harness, store, children } = parent(llm);
    await harness.send('research');
    expect(await harness.runNext()).toMatchObject({ status: 'waiting_for_children' });
    expect(children.spawned).toEqual(['s1:sub:c1', 's1:sub:c2']);
    expect(await store.getInput('s1', 1)).toMatchObject({ status: 'waiting', awaiting: ['c1', 'c2'], result: null });
    expect((await store.getSession('s1'))!.status).toBe('waiting_for_children');
    const child = await store.getSession('s1:sub:c1');
    expect(child).toMatchObject({ agent: 'reader', parentSessionId: 's1', rootSessionId: 's1', depth: 1, spawn: { inputSeq: 1, toolCallId: 'c1', wait: true } });
    expect((await store.listInputs('s1:sub:c1')).map((input) => [input.kind, input.payload])).toEqual([['send', { input: 'read A' }]]);
    expect(harness.sink.ofType('subagent_started')).toEqual([
      { type: 'subagent_started', childSessionId: 's1:sub:c1', agent: 'reader', toolCallId: 'c1', wait: true },
      { type: 'subagent_started', childSessionId: 's1:sub:c2', agent: 'reader', toolCallId: 'c2', wait: true },
    ]);

    // Not ready: nothing is claimed.
    expect(await harness.runNext()).toBeNull();
    expect(await store.deliverChildResult('s1:sub:c2', answer('c2', 'B says hi'))).toMatchObject({ parentSessionId: 's1' });
    expect(await harness.runNext()).toBeNull();
    expect(await store.deliverChildResult('s1:sub:c2', answer('c2', 'B again'))).toBeNull();
    await store.deliverChildResult('s1:sub:c1', answer('c1', 'A says hi'));

    const result = await harness.runNext();
    expect(result).toMatchObject({ status: 'completed', finalText: 'A and B combined.', toolCalls: 2 });
    expect(result!.usage.children).toEqual({ promptTokens: 14, completionTokens: 6, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 20, llmCalls: 2, costUsd: 0, costPicoUsd: 0 });
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[1]!.messages.slice(-2)).toEqual([
      { role: 'tool', toolCallId: 'c1', name: 'spawn_agent', content: 'A says hi' },
      { role: 'tool', toolCallId: 'c2', name: 'spawn_agent', content: 'B says hi' },
    ]);
    expect(harness.sink.ofType('subagent_finished').map((event) => event.toolCallId)).toEqual(['c1', 'c2']);
    expect(await store.getInput('s1', 1)).toMatchObject({ status: 'done', awaiting: null });
    // The two deliveries are inputs steered into the parent input: they end with it.
    const deliveries = (await store.listInputs('s1')).filter((input) => input.kind === 'child');
    expect(deliveries.map((input) => [input.inputId, input.status, input.steeredInto, input.result?.status])).toEqual([
      ['child:c2', 'done', 1, 'completed'],
      ['child:c1', 'done', 1, 'completed'],
    ]);
    expect(protocolViolations(await harness.history())).toEqual([]);
  });

  it('a later child that answers first waits for the earlier one: results are written in call order', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [spawn('c1', 'slow'), spawn('c2', 'fast')] }, { text: 'both' }]);
    const store = new InMemorySessionStore();
    const base = storeChildren(store);
    // c2's child answers before the parent reads the results (a fast child, or a run resumed after a crash).
    const children = {
      spawn: async (request: Parameters<ChildrenPort['spawn']>[0]) => {
        const outcome = await base.spawn(request);
        if (request.toolCallId === 'c2') await store.deliverChildResult('s1:sub:c2', answer('c2', 'B first'));
        return outcome;
      },
    };
    const harness = new LoopHarness({ llm, store, children, tools: [spawnAgentTool(['reader'])], profile: { subagents: ['reader'] } });
    await harness.send('go');
    expect(await harness.runNext()).toMatchObject({ status: 'waiting_for_children' });
    // Nothing answered yet: c2's result waits behind c1's.
    expect((await harness.history()).filter((message) => message.role === 'tool')).toEqual([]);
    expect(await store.getInput('s1', 1)).toMatchObject({ status: 'waiting', awaiting: ['c1', 'c2'] });
    await store.deliverChildResult('s1:sub:c1', answer('c1', 'A later'));
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'both' });
    expect((await harness.history()).filter((message) => message.role === 'tool').map((message) => message.toolCallId)).toEqual(['c1', 'c2']);
    expect(protocolViolations(await harness.history())).toEqual([]);
  });

  it('a child that failed gives an error result naming it; the parent goes on', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [spawn('c1', 'read A')] }, { text: 'It failed.' }]);
    const { harness, store } = parent(llm);
    await harness.send('research');
    await harness.runNext();
    await store.deliverChildResult('s1:sub:c1', answer('c1', '[sub-agent s1:sub:c1 ended failed: hook.failed]', { status: 'failed', errorCode: 'hook.failed' }));
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'It failed.' });
    expect(llm.requests[1]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', name: 'spawn_agent', content: '[sub-agent s1:sub:c1 ended failed: hook.failed]', isError: true });
  });

  it('refusals are tool errors the model sees: an agent it may not start, too deep, too many children, bad arguments', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [spawn('c1', 'x', { agent: 'writer' }), spawn('c2', 'ok'), spawn('c3', 'one too many'), { id: 'c4', name: 'spawn_agent', arguments: { agent: 'reader' } }] },
      { text: 'done' },
    ]);
    const { harness, store, children } = parent(llm, { maxChildrenPerInput: 1 });
    await harness.send('go');
    expect(await harness.runNext()).toMatchObject({ status: 'waiting_for_children' });
    expect(children.spawned).toEqual(['s1:sub:c2']);
    // Results stay in call order: c1's refusal now; c3 and c4 wait behind c2's child.
    const results = async () => (await harness.history()).filter((message) => message.role === 'tool').map((message) => [message.toolCallId, message.isError === true, String(message.content).slice(0, 40)]);
    // The schema names the agents it may start (an enum): a refusal before anything is written.
    expect(await results()).toEqual([['c1', true, 'Error: invalid arguments for tool "spawn']]);
    expect(await store.getInput('s1', 1)).toMatchObject({ awaiting: ['c2'] });
    await store.deliverChildResult('s1:sub:c2', answer('c2', 'read it'));
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'done', toolCalls: 1 });
    expect(await results()).toEqual([
      ['c1', true, 'Error: invalid arguments for tool "spawn'],
      ['c2', false, 'read it'],
      ['c3', true, 'Error: this input already started 1 sub-'],
      ['c4', true, expect.stringContaining('Error:')],
    ]);
    expect(children.spawned).toEqual(['s1:sub:c2']);
    expect(protocolViolations(await harness.history())).toEqual([]);
  });

  it('a reply mixing spawn_agent with other tools keeps every result in call order: the calls after a waiting child run once it answered', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'before' } }, spawn('c1', 'read'), { id: 'e2', name: 'echo', arguments: { text: 'after' } }] },
      { text: 'all three' },
    ]);
    const { harness, store } = parent(llm);
    await harness.send('go');
    expect(await harness.runNext()).toMatchObject({ status: 'waiting_for_children' });
    expect((await harness.history()).filter((message) => message.role === 'tool').map((message) => message.toolCallId)).toEqual(['e1']);
    await store.deliverChildResult('s1:sub:c1', answer('c1', 'child says'));
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'all three', toolCalls: 3 });
    expect((await harness.history()).filter((message) => message.role === 'tool').map((message) => [message.toolCallId, message.content])).toEqual([
      ['e1', 'echo: before'],
      ['c1', 'child says'],
      ['e2', 'echo: after'],
    ]);
    // e2 ran after the wake, without being taken for a call in doubt.
    expect(harness.sink.ofType('tool_call_in_doubt')).toEqual([]);
    expect(protocolViolations(await harness.history())).toEqual([]);
  });

  it('depth: a session at the agent\'s maxSpawnDepth may not start another level', async () => {
    const store = new InMemorySessionStore();
    // A child at depth 1 whose agent allows depth 1 only.
    await store.createSession({ id: 'root' });
    const lease = await store.acquireLease({ sessionId: 'root', owner: 't', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('lease');
    await store.spawnChild({ parentSessionId: 'root', leaseToken: lease.token, inputSeq: 1, toolCallId: 'k', childSessionId: 'root:sub:k', agent: 'reader', task: 'go deeper', wait: true, rootSessionId: 'root', depth: 1, maxChildrenPerInput: 8 });
    await store.releaseLease({ sessionId: 'root', token: lease.token });
    const llm = new ScriptedLlm([{ toolCalls: [spawn('d1', 'deeper')] }, { text: 'did it myself' }]);
    const harness = new LoopHarness({ llm, store, sessionId: 'root:sub:k', children: storeChildren(store), tools: [spawnAgentTool(['reader'])], profile: { subagents: ['reader'], maxSpawnDepth: 1 } });
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'did it myself' });
    expect(String(llm.requests[1]!.messages.at(-1)!.content)).toContain('deeper than the 1 allowed');
  });

  it('wait: false returns the child id at once; the result arrives later as a <subagent_result> message', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [spawn('c1', 'background', { wait: false })] }, { text: 'Started it.' }, { text: 'Got the background result.' }]);
    const { harness, store } = parent(llm);
    await harness.send('go');
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'Started it.' });
    expect(JSON.parse(String(llm.requests[1]!.messages.at(-1)!.content))).toMatchObject({ childSessionId: 's1:sub:c1', status: 'started' });
    expect(await store.deliverChildResult('s1:sub:c1', answer('c1', 'background done', { wait: false }))).toMatchObject({ seq: 2 });
    expect(await store.getInput('s1', 2)).toMatchObject({ kind: 'child', mode: 'steer', status: 'pending' });
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'Got the background result.' });
    expect(llm.requests[2]!.messages.at(-1)).toEqual({ role: 'user', content: '<subagent_result child="s1:sub:c1" agent="reader" status="completed">\nbackground done\n</subagent_result>' });
    expect(harness.sink.ofType('subagent_finished')).toHaveLength(1);
  });

  it('a cancel while waiting wakes the input: it ends cancelled, its open calls closed', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [spawn('c1', 'slow')] }]);
    const { harness, store } = parent(llm);
    await harness.send('go');
    await harness.runNext();
    expect(await harness.runNext()).toBeNull();
    await store.requestCancelTree('s1');
    const cancel = new AbortController();
    cancel.abort(finishingCancel('cancelled by request'));
    expect(await harness.runNext(cancel.signal)).toMatchObject({ status: 'cancelled' });
    const last = (await harness.history()).at(-1)!;
    expect(last).toMatchObject({ role: 'tool', toolCallId: 'c1', content: '[skipped: cancelled — cancelled by request]' });
    // A result arriving after that is not wanted any more.
    expect(await store.deliverChildResult('s1:sub:c1', answer('c1', 'late'))).toBeNull();
    expect(protocolViolations(await harness.history())).toEqual([]);
  });
});
