import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import type { ScriptedReply } from '../../../../src/llm/scripted-llm.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { deferred, LoopHarness, runChecked } from './loop-harness.js';

const echoTool = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args: { text: string }) => `echo: ${args.text}`,
};

/** A script step that holds its call until `release`, and tells the test when the call is in flight. */
function held(reply: ScriptedReply) {
  const entered = deferred();
  const gate = deferred();
  const step = () => {
    entered.resolve();
    return { ...reply, gate: gate.promise };
  };
  return { step, entered: entered.promise, release: () => gate.resolve() };
}

/** The options of every inbox read (`listInputs`) the harness's store serves from now on. */
function inboxReads(harness: LoopHarness): unknown[] {
  const reads: unknown[] = [];
  const listInputs = harness.store.listInputs.bind(harness.store);
  harness.store.listInputs = (...args: Parameters<typeof listInputs>) => {
    reads.push(args[1]);
    return listInputs(...args);
  };
  return reads;
}

describe('inputs that arrive mid-run (steering)', () => {
  it('a steer input joins at the next round boundary, once, and a would-be terminal round runs another (edge case 18)', async () => {
    const first = held({ text: 'Working on X.' });
    const llm = new ScriptedLlm([first.step, { text: 'X done, and Y too.' }, { text: 'never asked' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('do X');
    const run = runChecked(harness);
    await first.entered;
    const steerSeq = await harness.send('also do Y', undefined, 'steer');
    expect(await harness.store.getInput(harness.sessionId, steerSeq)).toMatchObject({ status: 'pending' });
    first.release();
    const result = await run;
    expect(result).toMatchObject({ status: 'completed', finalText: 'X done, and Y too.', rounds: 2 });
    const steer = '<follow_up>\nalso do Y\n</follow_up>';
    expect(await harness.history()).toEqual([
      { role: 'user', content: 'do X' },
      { role: 'assistant', content: 'Working on X.' },
      { role: 'user', content: steer },
      { role: 'assistant', content: 'X done, and Y too.' },
    ]);
    expect(llm.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: steer });
    expect(await harness.store.getInput(harness.sessionId, steerSeq)).toMatchObject({ status: 'done' });
    expect(harness.sink.ofType('steer_applied')).toEqual([{ type: 'steer_applied', inputSeqs: [steerSeq], roundIndex: 1 }]);
    // Delivered exactly once: nothing is left to run.
    expect(await runChecked(harness)).toBeNull();
    expect(llm.requests).toHaveLength(2);
    expect(harness.sink.ofType('session_ended')).toHaveLength(1);
  });

  it('a steer input that arrives during a tool round joins the next round without an extra one', async () => {
    const first = held({ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'a' } }] });
    const llm = new ScriptedLlm([first.step, { text: 'done' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('go');
    const run = runChecked(harness);
    await first.entered;
    await harness.send('faster please', undefined, 'steer');
    first.release();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'done', rounds: 2 });
    const history = await harness.history();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(history[3]).toEqual({ role: 'user', content: '<follow_up>\nfaster please\n</follow_up>' });
    expect(protocolViolations(history)).toEqual([]);
  });

  it('a steer input that arrives while a tool runs joins the next round, and a run without followers never reads the inbox', async () => {
    const toolEntered = deferred();
    const toolGate = deferred();
    const slowTool = {
      name: 'slow',
      description: 'Waits for the test',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        toolEntered.resolve();
        await toolGate.promise;
        return 'slow done';
      },
    };
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'done' }]);
    const harness = new LoopHarness({ llm, tools: [slowTool] });
    const reads = inboxReads(harness);
    await harness.send('go');
    const run = runChecked(harness);
    await toolEntered.promise;
    // No follower so far: the rounds so far read no inbox.
    expect(reads).toEqual([]);
    await harness.send('and then this', undefined, 'steer');
    toolGate.resolve();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'done', rounds: 2 });
    const history = await harness.history();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(history[3]).toEqual({ role: 'user', content: '<follow_up>\nand then this\n</follow_up>' });
    // Read once at the round start after the tool result's commit saw the follower, once after the final reply.
    expect(reads).toHaveLength(2);
  });

  it('a run followed only by queued inputs reads the inbox once, after its final reply, and leaves them queued', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'done' }, { text: 'second' }, { text: 'third' }]);
    const harness = new LoopHarness({ llm });
    const reads = inboxReads(harness);
    await harness.send('go');
    await harness.send('later one');
    await harness.send('later two');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'done', rounds: 2 });
    // Every commit reported pending inputs, none of which would change the run: no round-start reads.
    expect(reads).toHaveLength(1);
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'second' });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'third' });
  });

  it('steering is drained before round.start hooks, so a hook break cannot strand it', async () => {
    const first = held({ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'a' } }] });
    const llm = new ScriptedLlm([first.step]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    const seen: number[] = [];
    harness.hooks.register('round.start', (ctx) => {
      seen.push(ctx.steeredInputs);
      if (ctx.roundIndex === 1) return 'break';
    });
    await harness.send('go');
    const run = runChecked(harness);
    await first.entered;
    const steerSeq = await harness.send('note this', undefined, 'steer');
    first.release();
    expect(await run).toMatchObject({ status: 'completed' });
    expect(seen).toEqual([0, 1]);
    expect(await harness.store.getInput(harness.sessionId, steerSeq)).toMatchObject({ status: 'done' });
    expect((await harness.history()).at(-1)).toEqual({ role: 'user', content: '<follow_up>\nnote this\n</follow_up>' });
  });

  it('a queued input waits for the running one and then runs on its own', async () => {
    const first = held({ text: 'one' });
    const llm = new ScriptedLlm([first.step, { text: 'two' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('first');
    const run = runChecked(harness);
    await first.entered;
    await harness.send('second');
    first.release();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'one', rounds: 1 });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'two' });
    expect((await harness.history()).map((message) => message.content)).toEqual(['first', 'one', 'second', 'two']);
  });

  it('an interrupt input ends the running input cancelled at the next boundary, then runs normally', async () => {
    const first = held({ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'a' } }] });
    const llm = new ScriptedLlm([first.step, { text: 'Switched to the new task.' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('long task');
    const run = runChecked(harness);
    await first.entered;
    const interruptSeq = await harness.send('stop, do this instead', undefined, 'interrupt');
    first.release();
    const result = await run;
    expect(result).toMatchObject({ status: 'cancelled', finalText: '[cancelled: interrupted by a newer input]', rounds: 1, toolCalls: 1 });
    expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'cancelled' });
    // What the interrupted input produced is kept.
    expect((await harness.history()).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(llm.requests).toHaveLength(1);
    expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'cancelled', status: 'cancelled' }]);

    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'Switched to the new task.' });
    expect(await harness.store.getInput(harness.sessionId, interruptSeq)).toMatchObject({ status: 'done' });
    const history = await harness.history();
    expect(history.slice(3)).toEqual([
      { role: 'user', content: 'stop, do this instead' },
      { role: 'assistant', content: 'Switched to the new task.' },
    ]);
    expect(protocolViolations(history)).toEqual([]);
  });

  it('an interrupt that arrives during a final reply keeps the reply and still cancels', async () => {
    const first = held({ text: 'Almost there.' });
    const llm = new ScriptedLlm([first.step, { text: 'new' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('task');
    const run = runChecked(harness);
    await first.entered;
    await harness.send('urgent', undefined, 'interrupt');
    first.release();
    expect(await run).toMatchObject({ status: 'cancelled' });
    expect((await harness.history()).at(-1)).toEqual({ role: 'assistant', content: 'Almost there.' });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'new' });
  });

  it('a timer input that fires mid-run is steered in as a timer message', async () => {
    const first = held({ text: 'waiting' });
    const llm = new ScriptedLlm([first.step, { text: 'timer handled' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('remind me');
    const run = runChecked(harness);
    await first.entered;
    await harness.add('timer', { timerId: 't1', note: 'check the oven', fireCount: 1 });
    first.release();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'timer handled', rounds: 2 });
    expect((await harness.history())[2]).toEqual({ role: 'user', content: '<timer id="t1" firing="1">\ncheck the oven\n</timer>' });
  });

  it('a steer that arrives during the last round allowed does not force a wrap-up: the reply ends the run, the steer runs next', async () => {
    const first = held({ text: 'X done.' });
    const llm = new ScriptedLlm([first.step, { text: 'Y done.' }]);
    const harness = new LoopHarness({ llm, profile: { maxRounds: 1 } });
    await harness.send('do X');
    const run = runChecked(harness);
    await first.entered;
    const steerSeq = await harness.send('also do Y', undefined, 'steer');
    first.release();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'X done.', rounds: 1 });
    expect(llm.requests).toHaveLength(1);
    expect(await harness.store.getInput(harness.sessionId, steerSeq)).toMatchObject({ status: 'pending' });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'Y done.' });
    expect(llm.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'also do Y' });
  });

  it('an interrupt behind a backlog of 100 queued inputs still ends the running input at its next boundary', async () => {
    const first = held({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] });
    const llm = new ScriptedLlm([first.step, { text: 'never asked' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('long task');
    const run = runChecked(harness);
    await first.entered;
    for (let i = 0; i < 100; i += 1) await harness.send(`queued ${i}`);
    await harness.send('stop that', undefined, 'interrupt');
    first.release();
    expect(await run).toMatchObject({ status: 'cancelled' });
    expect(llm.requests).toHaveLength(1);
  });

  it('a steered follow-up keeps its images and its author name', async () => {
    const first = held({ text: 'Looking.' });
    const llm = new ScriptedLlm([first.step, { text: 'I see the screenshot.' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('check the page');
    const run = runChecked(harness);
    await first.entered;
    const image = { type: 'image', url: 'https://example.com/shot.png', mediaType: 'image/png' };
    const input = { role: 'user', name: 'jane', content: [{ type: 'text', text: 'also look at this' }, image] };
    await harness.add('send', { input }, 'steer');
    first.release();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'I see the screenshot.', rounds: 2 });
    const steer = { role: 'user', name: 'jane', content: [{ type: 'text', text: '<follow_up>\nalso look at this\n</follow_up>' }, image] };
    expect((await harness.history())[2]).toEqual(steer);
    expect(llm.requests[1]!.messages.at(-1)).toEqual(steer);
  });

  it('a resume in steer mode is not folded into the run as text: it runs as its own input after it', async () => {
    const first = held({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] });
    const llm = new ScriptedLlm([first.step, { text: 'first done' }, { text: 'resumed' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('go');
    const run = runChecked(harness);
    await first.entered;
    const resumeSeq = await harness.add('resume', {}, 'steer');
    first.release();
    expect(await run).toMatchObject({ status: 'completed', finalText: 'first done' });
    expect(harness.sink.ofType('steer_applied')).toEqual([]);
    expect((await harness.history()).some((message) => message.role === 'user' && String(message.content).includes('(resume)'))).toBe(false);
    expect(await harness.store.getInput(harness.sessionId, resumeSeq)).toMatchObject({ status: 'pending' });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'resumed' });
  });
});
