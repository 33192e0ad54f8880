import { describe, expect, it, vi } from 'vitest';
import { CancelledError } from '../../../../src/core/errors/index.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { WRAP_UP_PROMPT } from '../../../../src/core/loop/limits.js';
import { finishingCancel } from '../../../../src/core/loop/run-outcomes.js';
import type { Llm } from '../../../../src/core/ports/llm.js';
import { requestUserInputTool } from '../../../../src/core/tools/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { deferred, echoTool, LoopHarness, patientClock, runChecked } from './loop-harness.js';

async function expectValidHistory(harness: LoopHarness, allowTrailingPending = false): Promise<void> {
  expect(protocolViolations(await harness.history(), { allowTrailingPending })).toEqual([]);
}

describe('run statuses', () => {
  it('completed: the reply ends the run with exactly one session_ended', async () => {
    const harness = new LoopHarness({ llm: new ScriptedLlm([{ text: 'Hi there' }]) });
    await harness.send('hello');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'Hi there', rounds: 1 });
    expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'done', errorCode: null });
    expect(harness.sink.ofType('session_started')).toEqual([{ type: 'session_started', resumed: false }]);
    expect(harness.sink.ofType('session_ended')).toHaveLength(1);
    await expectValidHistory(harness);
  });

  describe('waiting_for_input', () => {
    const ask = { id: 'ask1', name: 'request_user_input', arguments: { prompt: 'Which colour?', options: ['red', 'blue'] } };

    async function waitingSession(llm: ScriptedLlm): Promise<LoopHarness> {
      const harness = new LoopHarness({ llm, tools: [requestUserInputTool, echoTool] });
      await harness.send('paint it');
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'waiting_for_input', rounds: 1 });
      return harness;
    }

    it('persists the question, and a resume with submit answers it and continues to completion', async () => {
      const llm = new ScriptedLlm([{ text: 'Let me ask.', toolCalls: [ask] }, { text: 'Painting it blue.' }]);
      const harness = await waitingSession(llm);
      expect(harness.sink.ofType('user_input_requested')).toEqual([
        { type: 'user_input_requested', interactionId: 'ask1', toolCallId: 'ask1', prompt: 'Which colour?', options: ['red', 'blue'] },
      ]);
      const session = await harness.store.getSession(harness.sessionId);
      expect(session!.status).toBe('waiting_for_input');
      expect(session!.pending).toMatchObject({ unresolvedIds: ['ask1'], interactions: [{ interactionId: 'ask1', prompt: 'Which colour?' }] });
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'done', result: { status: 'waiting_for_input' } });
      await expectValidHistory(harness, true);

      await harness.add('resume', { submit: { interactionId: 'ask1', value: 'blue' } });
      const resumed = await runChecked(harness);
      expect(resumed).toMatchObject({ status: 'completed', finalText: 'Painting it blue.' });
      const history = await harness.history();
      expect(history.slice(2)).toEqual([
        { role: 'tool', toolCallId: 'ask1', name: 'request_user_input', content: 'blue' },
        { role: 'assistant', content: 'Painting it blue.' },
      ]);
      expect(llm.requests[1]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'ask1', name: 'request_user_input', content: 'blue' });
      expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
      // The answer is stamped with the input that delivered it, so it sorts after its call.
      const rows = await harness.store.loadHistory(harness.sessionId);
      expect(rows[2]).toMatchObject({ inputSeq: 2, round: 0 });
      await expectValidHistory(harness);
      expect(harness.sink.ofType('session_ended')).toHaveLength(2);
    });

    it('closes the other calls of the batch as superseded', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'x' } }, ask] }, { text: 'ok' }]);
      const harness = await waitingSession(llm);
      const history = await harness.history();
      expect(history[2]).toEqual({ role: 'tool', toolCallId: 'e1', name: 'echo', content: '[skipped: superseded by a user-input request]' });
      await expectValidHistory(harness, true);
      await harness.add('resume', { submit: { interactionId: 'ask1', value: { colour: 'red' } } });
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'ok' });
      expect((await harness.history())[3]).toMatchObject({ toolCallId: 'ask1', content: '{"colour":"red"}' });
      await expectValidHistory(harness);
    });

    it('fails a submit for an unknown interaction with input.invalid and keeps the question', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [ask] }, { text: 'thanks' }]);
      const harness = await waitingSession(llm);
      await harness.add('resume', { submit: { interactionId: 'nope', value: 'x' } });
      expect(await runChecked(harness)).toMatchObject({ status: 'failed' });
      expect(await harness.store.getInput(harness.sessionId, 2)).toMatchObject({ status: 'failed', errorCode: 'input.invalid' });
      // The bad answer wrote nothing: the question still waits and the right answer still works.
      const session = await harness.store.getSession(harness.sessionId);
      expect(session!.pending).toMatchObject({ interactions: [{ interactionId: 'ask1' }] });
      expect(session!.status).toBe('waiting_for_input');
      expect(await harness.history()).toHaveLength(2);
      // A caller's mistake is not an agent error.
      expect(harness.sink.ofType('agent_error')).toEqual([]);
      await harness.add('resume', { submit: { interactionId: 'ask1', value: 'yes' } });
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'thanks' });
      await expectValidHistory(harness);
      expect(llm.requests).toHaveLength(2);
    });

    it('fails a send while waiting with session.pending and keeps the question', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [ask] }, { text: 'thanks' }]);
      const harness = await waitingSession(llm);
      await harness.send('something else');
      expect(await runChecked(harness)).toMatchObject({ status: 'failed' });
      const input = await harness.store.getInput(harness.sessionId, 2);
      expect(input).toMatchObject({ status: 'failed', errorCode: 'session.pending' });
      expect(input!.errorMessage).toContain('ask1');
      const session = await harness.store.getSession(harness.sessionId);
      expect(session!.pending).toMatchObject({ interactions: [{ interactionId: 'ask1' }] });
      expect(session!.status).toBe('waiting_for_input');
      expect(await harness.history()).toHaveLength(2);
      expect(llm.requests).toHaveLength(1);
      expect(harness.sink.ofType('session_ended')).toHaveLength(2);
      await harness.add('resume', { submit: { interactionId: 'ask1', value: 'go' } });
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'thanks' });
      await expectValidHistory(harness);
    });

    it('a plain resume while a question waits stays waiting without calling the model', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [ask] }]);
      const harness = await waitingSession(llm);
      await harness.add('resume', {});
      expect(await runChecked(harness)).toMatchObject({ status: 'waiting_for_input' });
      expect(llm.requests).toHaveLength(1);
    });
  });

  describe('cancelled', () => {
    it('a finishing cancel during a streamed reply keeps the partial text', async () => {
      const entered = deferred();
      const llm: Llm = {
        provider: 'test',
        model: 'm',
        complete: (_request, options) =>
          new Promise((_resolve, reject) => {
            options.handlers?.onTextDelta?.('Partial ');
            options.handlers?.onTextDelta?.('answer');
            options.signal.addEventListener('abort', () => reject(options.signal.reason as Error), { once: true });
            entered.resolve();
          }),
      };
      const harness = new LoopHarness({ llm });
      await harness.send('long task');
      const controller = new AbortController();
      const run = runChecked(harness, controller.signal);
      await entered.promise;
      controller.abort(finishingCancel('user'));
      const result = await run;
      expect(result).toMatchObject({ status: 'cancelled', finalText: '[cancelled: user]' });
      expect(await harness.history()).toEqual([
        { role: 'user', content: 'long task' },
        { role: 'assistant', content: 'Partial answer' },
      ]);
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'cancelled', result: { status: 'cancelled' } });
      expect(harness.sink.ofType('loop_cancelled')).toEqual([{ type: 'loop_cancelled', reason: 'user', roundIndex: 0 }]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'cancelled', status: 'cancelled' }]);
      // Cancelled text is kept, so it is not announced as discarded; the stream is closed before the end.
      expect(harness.sink.ofType('stream_discarded')).toEqual([]);
      const types = harness.sink.types();
      expect(types.indexOf('stream_completed')).toBeGreaterThan(types.indexOf('stream_delta'));
      expect(types.at(-1)).toBe('session_ended');
    });

    it('a finishing cancel while a scripted step is held by a gate ends the input cancelled', async () => {
      const gate = deferred();
      const entered = deferred();
      const llm = new ScriptedLlm([
        () => {
          entered.resolve();
          return { text: 'never', gate: gate.promise };
        },
      ]);
      const harness = new LoopHarness({ llm });
      await harness.send('go');
      const controller = new AbortController();
      const run = runChecked(harness, controller.signal);
      await entered.promise;
      controller.abort(finishingCancel('user'));
      expect(await run).toMatchObject({ status: 'cancelled', finalText: '[cancelled: user]', rounds: 0 });
      expect(await harness.history()).toEqual([{ role: 'user', content: 'go' }]);
      expect(harness.sink.ofType('session_ended')).toHaveLength(1);
      gate.resolve();
    });

    it('a finishing cancel during a tool closes the open calls and the history stays valid', async () => {
      const entered = deferred();
      const slow = {
        name: 'slow',
        description: 'Waits until cancelled',
        parameters: { type: 'object', properties: {} },
        execute: (_args: Record<string, never>, ctx: { signal: AbortSignal }) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
            entered.resolve();
          }),
      };
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 's1', name: 'slow' }, { id: 'e1', name: 'echo', arguments: { text: 'a' } }] }]);
      const controller = new AbortController();
      const harness = new LoopHarness({ llm, tools: [slow, echoTool], clock: patientClock });
      await harness.send('go');
      const run = runChecked(harness, controller.signal);
      await entered.promise;
      controller.abort(finishingCancel('user'));
      expect(await run).toMatchObject({ status: 'cancelled', finalText: '[cancelled: user]' });
      const history = await harness.history();
      expect(history.slice(2)).toEqual([
        // slow was running when the cancel came (it may have taken effect); echo never started.
        { role: 'tool', toolCallId: 's1', name: 'slow', content: '[interrupted: cancelled — user; the call had started and may have taken effect]' },
        { role: 'tool', toolCallId: 'e1', name: 'echo', content: '[skipped: cancelled — user]' },
      ]);
      await expectValidHistory(harness);
      expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
      expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
    });

    it('a cancel while a parallel call runs keeps the result of a later call that already finished (I5)', async () => {
      // `charge` finishes first but waits to be committed behind `slow`, earlier in model order.
      const entered = deferred();
      const charged = deferred();
      const slow = {
        name: 'slow',
        description: 'Waits until cancelled',
        parameters: { type: 'object', properties: {} },
        concurrencySafe: true,
        execute: (_args: Record<string, never>, ctx: { signal: AbortSignal }) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
            entered.resolve();
          }),
      };
      const charge = {
        name: 'charge',
        description: 'Charges a card',
        parameters: { type: 'object', properties: {} },
        concurrencySafe: true,
        execute: () => {
          charged.resolve();
          return 'charged card: ok';
        },
      };
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'a', name: 'slow' }, { id: 'b', name: 'charge' }] }]);
      const controller = new AbortController();
      const harness = new LoopHarness({ llm, tools: [slow, charge], clock: patientClock });
      await harness.send('go');
      const run = runChecked(harness, controller.signal);
      await Promise.all([entered.promise, charged.promise]);
      await vi.waitFor(() => expect(harness.sink.ofType('tool_call_started')).toHaveLength(2));
      controller.abort(finishingCancel('user'));
      expect(await run).toMatchObject({ status: 'cancelled' });
      const results = (await harness.history()).filter((message) => message.role === 'tool');
      expect(results).toEqual([
        { role: 'tool', toolCallId: 'a', name: 'slow', content: '[interrupted: cancelled — user; the call had started and may have taken effect]' },
        { role: 'tool', toolCallId: 'b', name: 'charge', content: 'charged card: ok' },
      ]);
      expect(harness.sink.ofType('tool_call_completed').map((event) => [event.toolCallId, event.output])).toEqual([['b', 'charged card: ok']]);
      await expectValidHistory(harness);
      expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
    });

    it.each([
      ['a CancelledError without finish', () => new CancelledError('shutdown')],
      ['a plain string', () => 'shutdown'],
      ['no reason at all', () => undefined],
    ])('an abort with %s rejects and leaves the input running', async (_label, reason) => {
      const gate = deferred();
      const entered = deferred();
      const llm = new ScriptedLlm([
        () => {
          entered.resolve();
          return { text: 'never', gate: gate.promise };
        },
        { text: 'second attempt' },
      ]);
      const harness = new LoopHarness({ llm });
      await harness.send('go');
      const controller = new AbortController();
      const run = harness.runNext(controller.signal);
      await entered.promise;
      controller.abort(reason());
      await expect(run).rejects.toBeInstanceOf(CancelledError);
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'running', result: null });
      // The input's own message is written with the run's first step after the model's reply: a run
      // stopped before it leaves the history as it was, and the next holder appends the message again.
      expect(await harness.history()).toEqual([]);
      // A run that stops without finishing announces no end: the next holder continues the input.
      expect(harness.sink.ofType('session_ended')).toEqual([]);
      expect(harness.sink.ofType('loop_cancelled')).toEqual([]);
      const next = await runChecked(harness);
      expect(next).toMatchObject({ status: 'completed', finalText: 'second attempt' });
      expect(await harness.history()).toEqual([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'second attempt' },
      ]);
      // Each attempt announced the message it appended, with the seq it has in the history.
      expect(harness.sink.ofType('message_appended').map((event) => [event.messageSeq, event.role])).toEqual([
        [1, 'user'],
        [1, 'user'],
        [2, 'assistant'],
      ]);
      expect(harness.sink.ofType('session_started').map((event) => event.resumed)).toEqual([false, true]);
      expect(harness.sink.ofType('session_ended')).toHaveLength(1);
      gate.resolve();
    });
  });

  it('hit_round_limit: persisted wrap-up prompt, tools offered but not callable, summary reported', async () => {
    const always = () => ({ toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] });
    const llm = new ScriptedLlm([always, always, { text: 'Did two echoes; more remain.' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool], profile: { maxRounds: 2 } });
    await harness.send('loop forever');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'hit_round_limit', finalText: '[hit_round_limit]\nDid two echoes; more remain.', rounds: 2, toolCalls: 2 });
    expect(result!.finalText.startsWith('[hit_round_limit]\n')).toBe(true);
    expect(llm.requests).toHaveLength(3);
    const wrap = llm.requests[2]!;
    expect(wrap.toolChoice).toBe('none');
    expect(wrap.tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(wrap.messages.at(-1)).toEqual({ role: 'user', content: WRAP_UP_PROMPT(2) });
    const history = await harness.history();
    expect(history.slice(-2)).toEqual([
      { role: 'user', content: WRAP_UP_PROMPT(2) },
      { role: 'assistant', content: 'Did two echoes; more remain.' },
    ]);
    expect(harness.sink.ofType('status_changed')).toContainEqual({ type: 'status_changed', kind: 'hit_round_limit', maxRounds: 2 });
    expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'done', result: { status: 'hit_round_limit' } });
    expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'hit_round_limit', status: 'hit_round_limit' }]);
    await expectValidHistory(harness);
  });

  it('budget_exceeded: the crossing round finishes with its tool results, then the run stops', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }, { id: 'c2', name: 'echo', arguments: { text: 'b' } }], usage: { promptTokens: 80, completionTokens: 30 } },
      { text: 'never asked' },
    ]);
    const harness = new LoopHarness({ llm, tools: [echoTool], profile: { maxTokensPerInput: 100 } });
    await harness.send('spend');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'budget_exceeded', finalText: '[budget_exceeded]', rounds: 1, toolCalls: 2 });
    expect(llm.requests).toHaveLength(1);
    const history = await harness.history();
    expect(history.slice(2).map((message) => message.role === 'tool' && message.content)).toEqual(['echo: a', 'echo: b']);
    expect(harness.sink.ofType('status_changed')).toContainEqual({ type: 'status_changed', kind: 'budget_exceeded', budgetTokens: 100, spentTokens: 110, rounds: 1 });
    expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'budget_exceeded', status: 'budget_exceeded' }]);
    await expectValidHistory(harness);
  });

  describe('degraded', () => {
    it('retryable errors beyond maxAttempts degrade with a persisted note', async () => {
      const unavailable = () => Object.assign(new Error('service unavailable'), { status: 503 });
      const llm = new ScriptedLlm([{ error: unavailable() }, { error: unavailable() }, { error: unavailable() }]);
      const harness = new LoopHarness({ llm });
      await harness.send('hi');
      const result = await runChecked(harness);
      const text = '[degraded: LLM retry_exhausted — Error: service unavailable]';
      expect(result).toMatchObject({ status: 'degraded', finalText: text });
      expect(llm.requests).toHaveLength(3);
      expect(result!.usage.llmCalls).toBe(3);
      expect((await harness.store.getSession(harness.sessionId))!.stats.llmCalls).toBe(3);
      const rows = await harness.store.loadHistory(harness.sessionId);
      expect(rows.at(-1)).toMatchObject({ kind: 'degraded', message: { role: 'assistant', content: text } });
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'done', errorCode: 'llm.retry_exhausted' });
      const types = harness.sink.types().filter((type) => type === 'llm_call_started' || type === 'llm_retry_attempted' || type === 'llm_degraded');
      expect(types).toEqual(['llm_call_started', 'llm_retry_attempted', 'llm_call_started', 'llm_retry_attempted', 'llm_call_started', 'llm_degraded']);
      expect(harness.sink.ofType('llm_retry_attempted').map((event) => [event.attempt, event.maxAttempts])).toEqual([
        [1, 3],
        [2, 3],
      ]);
      expect(harness.sink.ofType('llm_degraded')).toMatchObject([{ reason: 'retry_exhausted', attempts: 3 }]);
      // Every attempt's stream is closed, on failure too.
      expect(harness.sink.ofType('stream_completed').map((event) => event.success)).toEqual([false, false, false]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'degraded', status: 'degraded' }]);
    });

    it('a 401 is non-retryable: one attempt, no retry event', async () => {
      const llm = new ScriptedLlm([{ error: Object.assign(new Error('invalid api key'), { status: 401 }) }, { text: 'unused' }]);
      const harness = new LoopHarness({ llm });
      await harness.send('hi');
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'degraded', finalText: '[degraded: LLM non_retryable — Error: invalid api key]' });
      expect(llm.requests).toHaveLength(1);
      expect(harness.sink.ofType('llm_retry_attempted')).toEqual([]);
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ errorCode: 'llm.non_retryable' });
    });

    it('a plain { status: 401 } object is non-retryable too', async () => {
      const llm = new ScriptedLlm([{ error: { status: 401 } }, { text: 'unused' }]);
      const harness = new LoopHarness({ llm });
      await harness.send('hi');
      const result = await runChecked(harness);
      expect(result!.status).toBe('degraded');
      expect(result!.finalText).toMatch(/^\[degraded: LLM non_retryable — /);
      expect(llm.requests).toHaveLength(1);
    });

    it('a retry that then succeeds completes and counts both attempts', async () => {
      const llm = new ScriptedLlm([{ error: Object.assign(new Error('rate limited'), { status: 429 }), chunksBefore: ['lost '] }, { chunks: ['fine'] }]);
      const harness = new LoopHarness({ llm });
      await harness.send('hi');
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: 'fine' });
      expect(result!.usage.llmCalls).toBe(2);
      expect(harness.sink.ofType('stream_discarded')).toMatchObject([{ attempt: 1 }]);
      expect((await harness.store.getUsageRounds(harness.sessionId, 1))[0]!.llmCalls).toBe(2);
    });
  });

  describe('failed', () => {
    it('a throwing hook fails the input with agent_error and closes the open calls', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }, { id: 'c2', name: 'echo', arguments: { text: 'b' } }] }]);
      const harness = new LoopHarness({ llm, tools: [echoTool] });
      harness.hooks.register('tool.after', () => {
        throw new Error('hook bug');
      });
      await harness.send('go');
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'failed', finalText: '' });
      expect(harness.sink.ofType('agent_error')).toEqual([{ type: 'agent_error', errorCode: 'internal', errorType: 'Error', message: 'hook bug' }]);
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'failed', errorCode: 'internal', errorMessage: 'hook bug' });
      const history = await harness.history();
      expect(history.slice(2)).toEqual([
        // c1 ran (its tool.after hook threw before its result was committed); c2 never started.
        { role: 'tool', toolCallId: 'c1', name: 'echo', content: '[interrupted: the run failed; the call had started and may have taken effect]' },
        { role: 'tool', toolCallId: 'c2', name: 'echo', content: '[skipped: the run failed]' },
      ]);
      await expectValidHistory(harness);
      expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
      expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'error', status: 'failed' }]);
    });

    it('a message.append hook that always throws still lets the failure be recorded', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }]);
      const harness = new LoopHarness({ llm, tools: [echoTool] });
      harness.hooks.register('message.append', (ctx) => {
        if (ctx.message.role === 'tool') throw new Error('append hook bug');
      });
      await harness.send('go');
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'failed' });
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'failed', errorMessage: 'append hook bug' });
      await expectValidHistory(harness);
      expect(harness.sink.ofType('session_ended')).toHaveLength(1);
    });

    it('the next input runs normally after a failed one', async () => {
      const llm = new ScriptedLlm([{ text: 'one' }, { text: 'two' }]);
      const harness = new LoopHarness({ llm });
      let fail = true;
      harness.hooks.register('round.start', () => {
        if (fail) {
          fail = false;
          throw new Error('first only');
        }
      });
      await harness.send('a');
      await harness.send('b');
      expect(await runChecked(harness)).toMatchObject({ status: 'failed' });
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'one' });
      await expectValidHistory(harness);
    });
  });
});
