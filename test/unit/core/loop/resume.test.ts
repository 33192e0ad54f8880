import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { requestUserInputTool } from '../../../../src/core/tools/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { crashable, LoopHarness, runChecked, StoreCrashed } from './loop-harness.js';

const runs: string[] = [];
const lookupTool = {
  name: 'lookup',
  description: 'Look a word up',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  execute: (args: { word: string }) => {
    runs.push(args.word);
    return `meaning of ${args.word}`;
  },
};

const twoLookups = { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { word: 'a' } }, { id: 'l2', name: 'lookup', arguments: { word: 'b' } }] };

/**
 * A session whose first input asked for two tools and whose worker died right after persisting that
 * request (commit 1: the user message — written with the run's first step after the model's reply —
 * with the assistant's tool calls and the pending state), before either call started. The dying
 * worker has the tool as `fail`: such calls record their start each in its own commit just before
 * running, so the second commit — l1's start — is where it dies (a `retry` tool's starts go with the
 * request; see "the starts of retry calls …" in tools.test.ts).
 */
async function crashedAfterToolRequest(): Promise<InMemorySessionStore> {
  runs.length = 0;
  const store = new InMemorySessionStore();
  const worker = crashable(store);
  worker.crashAfter(1);
  const harness = new LoopHarness({ llm: new ScriptedLlm([twoLookups]), tools: [{ ...lookupTool, policy: 'fail' as const }], store: worker });
  await harness.send('define a and b');
  await expect(harness.runNext()).rejects.toBeInstanceOf(StoreCrashed);
  expect(runs).toEqual([]);
  expect((await store.getSession('s1'))!.pending).toMatchObject({ inputSeq: 1, unresolvedIds: ['l1', 'l2'] });
  expect(await store.loadOpenToolCalls('s1')).toEqual([]);
  return store;
}

/** The drain gives up on the crashed input (as after too many attempts): it ends, its calls stay open. */
async function giveUpInput(store: InMemorySessionStore, seq: number): Promise<void> {
  const lease = await store.acquireLease({ sessionId: 's1', owner: 'operator', ttlMs: 1000 });
  if (!lease.acquired) throw new Error('lease busy');
  await store.commitStep({ sessionId: 's1', leaseToken: lease.token, input: { seq, status: 'failed', errorCode: 'system.infrastructure', errorMessage: 'gave up' } });
  await store.releaseLease({ sessionId: 's1', token: lease.token });
}

async function expectValid(harness: LoopHarness): Promise<void> {
  expect(protocolViolations(await harness.history())).toEqual([]);
}

describe('pending tool calls: takeover, resume and abortPending', () => {
  it('a takeover of the running input answers its open calls and continues', async () => {
    const store = await crashedAfterToolRequest();
    const llm = new ScriptedLlm([{ text: 'a and b defined' }]);
    const harness = new LoopHarness({ llm, tools: [lookupTool], store });
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'a and b defined', rounds: 2, toolCalls: 2 });
    expect(runs).toEqual(['a', 'b']);
    expect(harness.sink.ofType('session_started')).toEqual([{ type: 'session_started', resumed: true }]);
    await expectValid(harness);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
  });

  it('a resume input finishes the open calls of an input that was given up, then runs a round', async () => {
    const store = await crashedAfterToolRequest();
    await giveUpInput(store, 1);
    const llm = new ScriptedLlm([{ text: 'recovered' }]);
    const harness = new LoopHarness({ llm, tools: [lookupTool], store });
    await harness.add('resume', {});
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'recovered', toolCalls: 2 });
    expect(runs).toEqual(['a', 'b']);
    const rows = await store.loadHistory('s1');
    // Out-of-band results carry the input that wrote them, so they sort after their calls.
    expect(rows.slice(2, 4).map((row) => [row.message.role, row.inputSeq])).toEqual([
      ['tool', 2],
      ['tool', 2],
    ]);
    expect((await store.getSession('s1'))!.pending).toBeNull();
    await expectValid(harness);
  });

  it('a send or a timer into a session whose given-up input left calls open is refused with session.pending: the calls do not run, and stay open for a resume', async () => {
    const store = await crashedAfterToolRequest();
    await giveUpInput(store, 1);
    const llm = new ScriptedLlm([{ text: 'recovered' }]);
    const harness = new LoopHarness({ llm, tools: [lookupTool], store });
    await harness.send('next question');
    expect(await runChecked(harness)).toMatchObject({ status: 'failed' });
    await harness.add('timer', { timerId: 't1', note: 'wake up', fireCount: 1 });
    expect(await runChecked(harness)).toMatchObject({ status: 'failed' });
    for (const seq of [2, 3]) {
      const input = await store.getInput('s1', seq);
      expect(input).toMatchObject({ status: 'failed', errorCode: 'session.pending' });
      expect(input!.errorMessage).toMatch(/^input 1 ended with tool call\(s\) lookup \(l1\), lookup \(l2\) still open; run them again with a resume input/);
    }
    // Nothing ran, nothing was written: the calls are open as the given-up input left them.
    expect(runs).toEqual([]);
    expect(llm.requests).toEqual([]);
    expect((await store.getSession('s1'))!.pending).toMatchObject({ inputSeq: 1, unresolvedIds: ['l1', 'l2'] });
    expect((await harness.history()).map((message) => message.role)).toEqual(['user', 'assistant']);
    // A resume runs them, and the session takes sends again.
    await harness.add('resume', {});
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'recovered', toolCalls: 2 });
    expect(runs).toEqual(['a', 'b']);
    const next = new LoopHarness({ llm: new ScriptedLlm([{ text: 'hello again' }]), tools: [lookupTool], store });
    await next.send('next question');
    expect(await runChecked(next)).toMatchObject({ status: 'completed', finalText: 'hello again' });
    await expectValid(next);
  });

  it('a takeover during the wrap-up call does not repeat the wrap-up prompt', async () => {
    runs.length = 0;
    const store = new InMemorySessionStore();
    const worker = crashable(store);
    // Commits: user message with the tool request (and the ledger start), tool result, wrap-up prompt; the finish fails.
    worker.crashAfter(3);
    const lookupA = { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { word: 'a' } }] };
    const first = new LoopHarness({ llm: new ScriptedLlm([lookupA, { text: 'lost summary' }]), tools: [lookupTool], store: worker, profile: { maxRounds: 1 } });
    await first.send('define a');
    await expect(first.runNext()).rejects.toBeInstanceOf(StoreCrashed);
    const llm = new ScriptedLlm([{ text: 'summary' }]);
    const harness = new LoopHarness({ llm, tools: [lookupTool], store, profile: { maxRounds: 1 } });
    expect(await runChecked(harness)).toMatchObject({ status: 'hit_round_limit', finalText: '[hit_round_limit]\nsummary', rounds: 1 });
    const history = await harness.history();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(llm.requests[0]!.toolChoice).toBe('none');
    expect(runs).toEqual(['a']);
  });

  it('abortPending closes every open call with <aborted: reason> and completes without calling the model', async () => {
    const store = await crashedAfterToolRequest();
    await giveUpInput(store, 1);
    const llm = new ScriptedLlm([]);
    const harness = new LoopHarness({ llm, tools: [lookupTool], store });
    await harness.add('resume', { abortPending: { reason: 'operator gave up' } });
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: '', rounds: 0 });
    expect(llm.requests).toEqual([]);
    expect(runs).toEqual([]);
    const history = await harness.history();
    expect(history.slice(2)).toEqual([
      { role: 'tool', toolCallId: 'l1', name: 'lookup', content: '<aborted: operator gave up>' },
      { role: 'tool', toolCallId: 'l2', name: 'lookup', content: '<aborted: operator gave up>' },
    ]);
    expect((await store.getSession('s1'))!.pending).toBeNull();
    expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'aborted_pending', status: 'completed' }]);
    await expectValid(harness);
    // The session is usable again.
    llm.push({ text: 'fresh start' });
    await harness.send('hello');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'fresh start' });
    await expectValid(harness);
  });

  it('abortPending closes a waiting question too', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'q1', name: 'request_user_input', arguments: { prompt: 'Sure?' } }] }, { text: 'moving on' }]);
    const harness = new LoopHarness({ llm, tools: [requestUserInputTool] });
    await harness.send('delete it');
    expect(await runChecked(harness)).toMatchObject({ status: 'waiting_for_input' });
    await harness.add('resume', { abortPending: { reason: 'no answer' } });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', rounds: 0 });
    expect((await harness.history()).at(-1)).toEqual({ role: 'tool', toolCallId: 'q1', name: 'request_user_input', content: '<aborted: no answer>' });
    expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
    await harness.send('next');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'moving on' });
    await expectValid(harness);
  });

  it('abortPending with nothing open completes at once', async () => {
    const llm = new ScriptedLlm([]);
    const harness = new LoopHarness({ llm });
    await harness.add('resume', { abortPending: { reason: 'just in case' } });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', rounds: 0 });
    expect(await harness.history()).toEqual([]);
  });

  it('a resume with nothing open runs one more round without a new user message', async () => {
    const llm = new ScriptedLlm([{ text: 'first' }, { text: 'continued' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('start');
    await runChecked(harness);
    await harness.add('resume', {});
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'continued', rounds: 1 });
    expect(llm.requests[1]!.messages).toEqual([
      { role: 'user', content: 'start' },
      { role: 'assistant', content: 'first' },
    ]);
  });
});

describe('a store outage mid-run', () => {
  it('stops the run without failing the input; the next attempt completes it', async () => {
    const store = new InMemorySessionStore();
    let failures = 1;
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'commitStep') {
          return async (step: Parameters<typeof store.commitStep>[0]) => {
            // The reply's step fails once, as a dropped connection would.
            if (step.input !== undefined && failures-- > 0) throw new Error('Connection terminated unexpectedly');
            return target.commitStep(step);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const llm = new ScriptedLlm([{ text: 'first try' }, { text: 'second try' }]);
    const first = new LoopHarness({ llm, store: flaky });
    await first.send('hi');
    await expect(first.runNext()).rejects.toMatchObject({ code: 'system.infrastructure' });
    expect(await store.getInput('s1', 1)).toMatchObject({ status: 'running' });
    expect(first.sink.ofType('agent_error')).toEqual([]);
    const second = new LoopHarness({ llm, store });
    expect(await second.runNext()).toMatchObject({ status: 'completed', finalText: 'second try' });
    expect((await second.history()).map((message) => message.role)).toEqual(['user', 'assistant']);
  });
});
