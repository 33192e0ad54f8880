import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { MAX_ARGUMENT_DEPTH, type ToolContext } from '../../../../src/core/tools/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import type { SessionStore, StepCommit } from '../../../../src/core/ports/session-store.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { crashable, deferred, echoTool, LoopHarness, patientClock, runChecked, StoreCrashed } from './loop-harness.js';

const failingTool = {
  name: 'explode',
  description: 'Always throws',
  parameters: { type: 'object', properties: {} },
  execute: () => {
    throw new Error('disk on fire');
  },
};

async function runOneRound(calls: { id: string; name: string; arguments?: string | Record<string, unknown> }[], tools: object[]) {
  const llm = new ScriptedLlm([{ toolCalls: calls }, { text: 'after tools' }]);
  const harness = new LoopHarness({ llm, tools: tools as never[], clock: patientClock });
  await harness.send('go');
  const result = await runChecked(harness);
  const history = await harness.history();
  expect(protocolViolations(history)).toEqual([]);
  expect(harness.sink.ofType('session_ended')).toHaveLength(1);
  return { llm, harness, result: result!, history };
}

describe('tool calls', () => {
  it('an unknown tool is answered with an error result and the run goes on', async () => {
    const { result, history, llm } = await runOneRound([{ id: 'u1', name: 'teleport', arguments: {} }], [echoTool]);
    expect(result).toMatchObject({ status: 'completed', finalText: 'after tools', toolCalls: 0 });
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'u1', name: 'teleport', isError: true });
    expect(String(history[2]!.content)).toMatch(/^Error: unknown tool "teleport"/);
    expect(String(history[2]!.content)).toContain('echo');
    expect(llm.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'u1' });
  });

  it('arguments that break the schema are an error result, and execute is not called', async () => {
    let calls = 0;
    const strict = { ...echoTool, execute: () => `ran ${++calls}` };
    const { result, history } = await runOneRound([{ id: 'b1', name: 'echo', arguments: { text: 42 } }], [strict]);
    expect(calls).toBe(0);
    expect(result).toMatchObject({ status: 'completed', toolCalls: 0 });
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'b1', isError: true });
    expect(String(history[2]!.content)).toMatch(/^Error: /);
  });

  it('text the store cannot hold (NUL, an unpaired surrogate) from a tool or the model is committed with U+FFFD', async () => {
    const binary = { name: 'binary', description: 'Bytes as text', parameters: { type: 'object', properties: {} }, execute: () => 'a\u0000b\ud800c' };
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'n1', name: 'binary', arguments: { note: 'x\u0000y' } }] }, { text: 'done \udc00' }]);
    const harness = new LoopHarness({ llm, tools: [binary] as never[], clock: patientClock });
    await harness.send('go');
    const result = await runChecked(harness);
    // The store refuses both (input.invalid): the input would have failed for what the tool returned.
    expect(result).toMatchObject({ status: 'completed', finalText: 'done \uFFFD' });
    const history = await harness.history();
    // The call's arguments are kept as the model's JSON text, where a NUL is an escape, not a character.
    expect(history[1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'n1', name: 'binary', arguments: '{"note":"x\\u0000y"}' }] });
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'n1', content: 'a\uFFFDb\uFFFDc' });
    expect(history[3]).toMatchObject({ role: 'assistant', content: 'done \uFFFD' });
  });

  it('arguments nested past MAX_ARGUMENT_DEPTH are an error result the model sees, not a failed input (no stack overflow on the way to the ledger)', async () => {
    const deep = `{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    const { result, history, harness } = await runOneRound([{ id: 'c1', name: 'echo', arguments: deep }], [echoTool]);
    expect(result).toMatchObject({ status: 'completed', finalText: 'after tools', toolCalls: 0 });
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'c1', isError: true, content: `Error: arguments nest arrays and objects deeper than ${MAX_ARGUMENT_DEPTH} levels` });
    expect(harness.sink.ofType('tool_call_failed')).toMatchObject([{ toolCallId: 'c1', errorCode: 'tool.invalid_args' }]);
  });

  it.each([
    ['an Error whose message is not a string', () => Object.assign(new Error(), { message: Symbol('odd') })],
    ['an Error whose message getter throws', () => Object.defineProperty(new Error(), 'message', { get: () => { throw new Error('getter'); } })],
    ['a revoked proxy', () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }],
  ])('a tool that throws %s is data too', async (_, thrown) => {
    const odd = { name: 'odd', description: 'Throws oddly', parameters: { type: 'object', properties: {} }, execute: () => { throw thrown(); } };
    const { result, history } = await runOneRound([{ id: 'c1', name: 'odd' }], [odd]);
    expect(result).toMatchObject({ status: 'completed', finalText: 'after tools' });
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'c1', isError: true, content: 'Error: the tool threw a value that is not an Error' });
  });

  it('a throwing tool is data: an error result the model sees, counted as a dispatch', async () => {
    const { result, history, harness } = await runOneRound([{ id: 'x1', name: 'explode' }], [failingTool]);
    expect(result).toMatchObject({ status: 'completed', toolCalls: 1 });
    expect(history[2]).toEqual({ role: 'tool', toolCallId: 'x1', name: 'explode', content: 'Error: disk on fire', isError: true });
    expect(harness.sink.ofType('tool_call_failed')).toMatchObject([{ toolCallId: 'x1', errorCode: 'tool.failed', output: 'Error: disk on fire' }]);
    expect(harness.sink.ofType('tool_call_completed')).toMatchObject([{ toolCallId: 'x1', failed: true }]);
    const types = harness.sink.types();
    expect(types.indexOf('tool_call_failed')).toBeLessThan(types.indexOf('tool_call_completed'));
  });

  it('the tool count excludes rejected calls (unknown tool, invalid arguments)', async () => {
    const { result, harness } = await runOneRound(
      [
        { id: 'c1', name: 'nope' },
        { id: 'c2', name: 'echo', arguments: '{"text": ' },
        { id: 'c3', name: 'echo', arguments: { wrong: true } },
        { id: 'c4', name: 'echo', arguments: { text: 'ok' } },
        { id: 'c5', name: 'explode' },
      ],
      [echoTool, failingTool],
    );
    expect(result.toolCalls).toBe(2);
    expect((await harness.store.getSession(harness.sessionId))!.stats.toolCalls).toBe(2);
  });

  it('tool results are truncated at 50,000 characters with a notice', async () => {
    const big = { name: 'dump', description: 'Big output', parameters: { type: 'object', properties: {} }, execute: () => 'x'.repeat(60_000) };
    const { history, llm } = await runOneRound([{ id: 'd1', name: 'dump' }], [big]);
    const content = String(history[2]!.content);
    expect(content).toBe(`${'x'.repeat(49_950)}\n... (truncated, 60000 total chars)`);
    expect(content.length).toBeLessThanOrEqual(50_000);
    expect(llm.requests[1]!.messages.at(-1)!.content).toBe(content);
  });

  it('non-string results are serialised as JSON', async () => {
    const json = { name: 'info', description: 'Object output', parameters: { type: 'object', properties: {} }, execute: () => ({ a: 1, b: ['x'] }) };
    const { history } = await runOneRound([{ id: 'i1', name: 'info' }], [json]);
    expect(JSON.parse(String(history[2]!.content))).toEqual({ a: 1, b: ['x'] });
  });

  it('concurrency-safe calls run in parallel and their results keep the model order', async () => {
    const slowGate = deferred();
    const started: string[] = [];
    const finished: string[] = [];
    const fetchTool = {
      name: 'fetch',
      description: 'Fetch a URL',
      parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
      concurrencySafe: true,
      execute: async (args: { url: string }) => {
        started.push(args.url);
        // The first call waits until the second one has run: it can only finish if they overlap.
        if (args.url === 'slow') await slowGate.promise;
        else slowGate.resolve();
        finished.push(args.url);
        return `page ${args.url}`;
      },
    };
    const { result, history } = await runOneRound(
      [
        { id: 'f1', name: 'fetch', arguments: { url: 'slow' } },
        { id: 'f2', name: 'fetch', arguments: { url: 'fast' } },
        { id: 'e3', name: 'echo', arguments: { text: 'serial' } },
      ],
      [fetchTool, echoTool],
    );
    expect(result).toMatchObject({ status: 'completed', toolCalls: 3 });
    expect(started).toEqual(['slow', 'fast']);
    expect(finished).toEqual(['fast', 'slow']);
    expect(history.slice(2, 5).map((message) => message.role === 'tool' && message.toolCallId)).toEqual(['f1', 'f2', 'e3']);
    expect(history.slice(2, 5).map((message) => message.content)).toEqual(['page slow', 'page fast', 'echo: serial']);
  });

  it('every handler gets the stable idempotency key <sessionId>:<toolCallId>', async () => {
    const seen: ToolContext[] = [];
    const spy = { ...echoTool, execute: (_args: unknown, ctx: ToolContext) => (seen.push(ctx), 'ok') };
    await runOneRound([{ id: 'k1', name: 'echo', arguments: { text: 'a' } }], [spy]);
    expect(seen.map((ctx) => [ctx.sessionId, ctx.toolCallId, ctx.idempotencyKey])).toEqual([['s1', 'k1', 's1:k1']]);
  });

  it('records every call in the ledger, started then ended, with the same step as its result', async () => {
    const { harness } = await runOneRound(
      [
        { id: 'l1', name: 'echo', arguments: { text: 'a' } },
        { id: 'l2', name: 'explode' },
      ],
      [echoTool, failingTool],
    );
    expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
    expect(harness.sink.ofType('tool_call_started').map((event) => event.toolCallId)).toEqual(['l1', 'l2']);
  });

  it('empty or repeated call ids from the model are made unique', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'a' } }] },
      { toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'b' } }, { id: ' ', name: 'echo', arguments: { text: 'c' } }] },
      { text: 'done' },
    ]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('go');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', toolCalls: 3 });
    const history = await harness.history();
    expect(protocolViolations(history)).toEqual([]);
    for (const request of llm.requests) expect(protocolViolations(request.messages)).toEqual([]);
  });

  it('a call id the model reuses after its call was folded away gets a new id, so a new idempotency key', async () => {
    const paid: string[] = [];
    const pay = {
      name: 'pay',
      description: 'Pay someone',
      parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
      execute: (args: { to: string }, ctx: ToolContext) => (paid.push(`${ctx.idempotencyKey} ${args.to}`), `paid ${args.to}`),
    };
    // The endpoint reuses call_0 every turn; input 2's first round folds input 1 (a summary call).
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: 'call_0', name: 'pay', arguments: { to: 'alice' } }] },
      { text: 'alice is paid' },
      { text: 'summary: alice was paid' },
      { toolCalls: [{ id: 'call_0', name: 'pay', arguments: { to: 'bob' } }] },
      { text: 'bob is paid' },
    ]);
    const harness = new LoopHarness({ llm, tools: [pay], profile: { contextBudgetTokens: 10, compactKeepLastInputs: 1 } });
    await harness.send('pay alice');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'alice is paid' });
    await harness.send('pay bob');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'bob is paid' });
    // Input 1's call is folded: not in what input 2 sends, only its summary is.
    expect(JSON.stringify(llm.requests[3]!.messages)).toContain('summary: alice was paid');
    expect(JSON.stringify(llm.requests[3]!.messages)).not.toContain('pay alice');
    expect(paid).toEqual(['s1:call_0 alice', 's1:call_0_2_0_0 bob']);
    const history = await harness.history();
    expect(history.filter((message) => message.role === 'tool').map((message) => message.role === 'tool' && message.toolCallId)).toEqual(['call_0_2_0_0']);
    expect(protocolViolations(history)).toEqual([]);
  });

  it('when an earlier result fails to commit, a later result held behind it is not committed ahead of it (I4)', async () => {
    const inner = new InMemorySessionStore();
    let failed = false;
    // Refuses the first commit of call A's result, as a connection lost on COMMIT would.
    const store = new Proxy(inner, {
      get(target, property) {
        if (property === 'commitStep') {
          return async (step: StepCommit) => {
            const carriesA = (step.messages ?? []).some((row) => row.message.role === 'tool' && row.message.toolCallId === 'A');
            if (carriesA && !failed) {
              failed = true;
              throw new StoreCrashed();
            }
            return target.commitStep(step);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as SessionStore;
    const gate = deferred();
    const slow = { name: 'slow', description: 'Waits for fast', concurrencySafe: true, parameters: { type: 'object', properties: {} }, execute: async () => (await gate.promise, 'A done') };
    const fast = { name: 'fast', description: 'Lets slow go', concurrencySafe: true, parameters: { type: 'object', properties: {} }, execute: () => (gate.resolve(), 'B done') };
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'A', name: 'slow' }, { id: 'B', name: 'fast' }] }, { text: 'never asked' }]);
    const harness = new LoopHarness({ llm, tools: [slow, fast], store, clock: patientClock });
    await harness.send('go');
    await expect(harness.runNext()).rejects.toBeInstanceOf(StoreCrashed);
    // Neither result is in the history; both calls stay open for whoever continues the input.
    expect((await harness.history()).filter((message) => message.role === 'tool')).toEqual([]);
    expect((await inner.getSession(harness.sessionId))!.pending?.unresolvedIds).toEqual(['A', 'B']);
  });

  it('a renamed call id stays within 40 characters (OpenAI refuses longer ones)', async () => {
    const long = `call_${'x'.repeat(35)}`;
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: long, name: 'echo', arguments: { text: 'a' } }, { id: long, name: 'echo', arguments: { text: 'b' } }] },
      { text: 'done' },
    ]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('go');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed' });
    const ids = harness.sink.ofType('tool_call_started').map((event) => event.toolCallId);
    expect(ids).toEqual([long, `${long.slice(0, 34)}_1_0_1`]);
    expect(ids.every((id) => id.length <= 40)).toBe(true);
  });

  it('an id over 40 characters is renamed, and a rename never lands on an id the reply or the window already holds', async () => {
    const long = 'x'.repeat(600);
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: 'q', name: 'echo', arguments: { text: 'a' } }] },
      // `q` is in the window: renamed q_1_1_1, the very id the model gave the first call of this reply.
      { toolCalls: [{ id: 'q_1_1_1', name: 'echo', arguments: { text: 'b' } }, { id: 'q', name: 'echo', arguments: { text: 'c' } }, { id: long, name: 'echo', arguments: { text: 'd' } }] },
      { text: 'done' },
    ]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('go');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', toolCalls: 4 });
    const ids = harness.sink.ofType('tool_call_started').map((event) => event.toolCallId);
    expect(ids).toEqual(['q', 'q_1_1_1', 'q_1_1_1_1', `${'x'.repeat(34)}_1_1_2`]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

/** The steps a store was asked to commit, in order, with what each carried. */
function recordingStore(inner: SessionStore) {
  const steps: { messages: string[]; ledger: string[] }[] = [];
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'commitStep') {
        return (step: StepCommit) => {
          steps.push({
            messages: (step.messages ?? []).map((entry) => entry.message.role),
            ledger: (step.toolCalls ?? []).map((call) => `${call.toolCallId}:${call.status}`),
          });
          return target.commitStep(step);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, steps };
}

describe("the tool ledger's starts (I5)", () => {
  const twoEchoes = { toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'a' } }, { id: 'e2', name: 'echo', arguments: { text: 'b' } }] };

  it("the starts of retry calls go with the assistant's request: no commit of their own, recorded before each call runs", async () => {
    const inner = new InMemorySessionStore();
    const { store, steps } = recordingStore(inner);
    const ledgerSeen: unknown[] = [];
    const watched = { ...echoTool, execute: async (args: { text: string }) => (ledgerSeen.push(await inner.loadOpenToolCalls('s1')), `echo: ${args.text}`) };
    const harness = new LoopHarness({ llm: new ScriptedLlm([twoEchoes, { text: 'after tools' }]), tools: [watched], store, clock: patientClock });
    await harness.send('go');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', toolCalls: 2 });
    expect(steps).toEqual([
      // The input's own message goes with the first step after the model's reply (deferMessages).
      { messages: ['user', 'assistant'], ledger: ['e1:started', 'e2:started'] },
      { messages: ['tool'], ledger: ['e1:completed'] },
      { messages: ['tool'], ledger: ['e2:completed'] },
      { messages: ['assistant'], ledger: [] },
    ]);
    expect(ledgerSeen[0]).toMatchObject([{ toolCallId: 'e1', status: 'started', attempts: 1 }, { toolCallId: 'e2', status: 'started', attempts: 1 }]);
    expect(await inner.loadOpenToolCalls('s1')).toEqual([]);
    // Each call is still announced when it starts, before its end.
    const types = harness.sink.events.filter((event) => event.type.startsWith('tool_call_')).map((event) => `${event.type}:${(event as { toolCallId: string }).toolCallId}`);
    expect(types).toEqual(['tool_call_started:e1', 'tool_call_completed:e1', 'tool_call_started:e2', 'tool_call_completed:e2']);
  });

  it('a fail tool, or a tool.before hook, keeps a commit per start, just before each call runs', async () => {
    for (const setup of ['fail', 'hook'] as const) {
      const { store, steps } = recordingStore(new InMemorySessionStore());
      const tool = setup === 'fail' ? { ...echoTool, policy: 'fail' as const } : echoTool;
      const harness = new LoopHarness({ llm: new ScriptedLlm([twoEchoes, { text: 'after tools' }]), tools: [tool], store, clock: patientClock });
      if (setup === 'hook') harness.hooks.register('tool.before', () => undefined);
      await harness.send('go');
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', toolCalls: 2 });
      expect(steps.map((step) => step.ledger), setup).toEqual([[], ['e1:started'], ['e1:completed'], ['e2:started'], ['e2:completed'], []]);
    }
  });

  it('a worker that dies after the request leaves its retry calls in doubt: the takeover runs each once more, the one that never ran included', async () => {
    const store = new InMemorySessionStore();
    const worker = crashable(store);
    const runs: string[] = [];
    const counted = { ...echoTool, execute: (args: { text: string }) => (runs.push(args.text), `echo: ${args.text}`) };
    // Commits: user message with the request (and both starts); e1 runs, and its result is the commit that fails.
    worker.crashAfter(1);
    const first = new LoopHarness({ llm: new ScriptedLlm([twoEchoes]), tools: [counted], store: worker, clock: patientClock });
    await first.send('go');
    await expect(first.runNext()).rejects.toBeInstanceOf(StoreCrashed);
    expect(runs).toEqual(['a']);
    expect(await store.loadOpenToolCalls('s1')).toMatchObject([{ toolCallId: 'e1', status: 'started' }, { toolCallId: 'e2', status: 'started' }]);
    const second = new LoopHarness({ llm: new ScriptedLlm([{ text: 'after tools' }]), tools: [counted], store, clock: patientClock });
    expect(await runChecked(second)).toMatchObject({ status: 'completed', toolCalls: 2 });
    expect(runs).toEqual(['a', 'a', 'b']);
    expect(second.sink.ofType('tool_call_in_doubt').map((event) => [event.toolCallId, event.policy])).toEqual([
      ['e1', 'retry'],
      ['e2', 'retry'],
    ]);
    expect(protocolViolations(await second.history())).toEqual([]);
    expect(await store.loadOpenToolCalls('s1')).toEqual([]);
  });
});
