import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { HOOK_POINTS } from '../../../../src/core/hooks/index.js';
import { WRAP_UP_PROMPT } from '../../../../src/core/loop/limits.js';
import type { LlmResponse } from '../../../../src/core/ports/llm.js';
import { ScriptedLlm, type ScriptStep } from '../../../../src/llm/scripted-llm.js';
import { deferred, LoopHarness, patientClock, runChecked } from './loop-harness.js';

const echoTool = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args: { text: string }) => `echo: ${args.text}`,
};

const twoEchoes = { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }, { id: 'c2', name: 'echo', arguments: { text: 'b' } }] };

function harnessWith(script: ScriptStep[], profile = {}) {
  const llm = new ScriptedLlm(script);
  const harness = new LoopHarness({ llm, tools: [echoTool], profile });
  return { llm, harness };
}

async function run(harness: LoopHarness, text = 'go') {
  await harness.send(text);
  const result = await runChecked(harness);
  const history = await harness.history();
  expect(protocolViolations(history)).toEqual([]);
  return { result: result!, history };
}

function reply(text: string): LlmResponse {
  return {
    text,
    thinking: '',
    toolCalls: [],
    finishReason: 'stop',
    rawFinishReason: 'stop',
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0 },
    model: 'hook',
    provider: 'hook',
  };
}

describe('hooks', () => {
  it('every hook point fires, in loop order, and session.start/session.end exactly once', async () => {
    // A tiny context budget: each input folds the one before it into a compact note (one summary call).
    const { harness, llm } = harnessWith([twoEchoes, { text: 'done' }, { text: 'summary' }, { text: 'second' }], {
      contextBudgetTokens: 10,
      compactKeepLastInputs: 1,
    });
    const fired: string[] = [];
    for (const point of HOOK_POINTS) harness.hooks.register(point, () => void fired.push(point));
    await run(harness);
    fired.length = 0;
    const llmRequests = llm.requests.length;
    await harness.send('again');
    await runChecked(harness);
    expect(llm.requests.length - llmRequests).toBe(2);
    expect(fired).toEqual([
      'session.start',
      'message.append', // the user message
      'round.start',
      'compact.before',
      'message.append', // the compact note
      'compact.after',
      'llm.before',
      'llm.after',
      'round.end',
      'complete.decide',
      'message.append', // the final reply
      'session.end',
    ]);
    const all = new Set<string>(fired);
    fired.length = 0;
    llm.push({ text: 'summary 2' }, twoEchoes, { text: 'done' });
    await harness.send('tools');
    await runChecked(harness);
    for (const point of fired) all.add(point);
    expect([...all].sort()).toEqual([...HOOK_POINTS].sort());
    expect(fired.filter((point) => point === 'session.start')).toHaveLength(1);
    expect(fired.filter((point) => point === 'session.end')).toHaveLength(1);
    const tools = fired.filter((point) => point.startsWith('tool') || point === 'round.decide' || point === 'round.end');
    expect(tools).toEqual([
      'round.decide',
      'tools.batch.before',
      'tool.before',
      'tool.before',
      'tool.after',
      'tool.after',
      'tools.batch.after',
      'round.end',
      'round.end',
    ]);
  });

  it('every loop point’s context names the session and the input being run', async () => {
    const { harness } = harnessWith([twoEchoes, { text: 'done' }, { text: 'summary' }, { text: 'second' }], { contextBudgetTokens: 10, compactKeepLastInputs: 1 });
    const seen = new Map<string, Set<string>>();
    for (const point of HOOK_POINTS) {
      harness.hooks.register(point, (ctx) => {
        const scopes = seen.get(point) ?? new Set<string>();
        scopes.add(`${ctx.sessionId}#${String(ctx.inputSeq)}`);
        seen.set(point, scopes);
      });
    }
    await run(harness);
    await harness.send('again');
    await runChecked(harness);
    expect([...seen.keys()].sort()).toEqual([...HOOK_POINTS].sort());
    for (const [point, scopes] of seen) expect([...scopes].every((scope) => /^s1#[12]$/.test(scope)), `${point}: ${[...scopes].join(', ')}`).toBe(true);
    expect(seen.get('session.start')).toEqual(new Set(['s1#1', 's1#2']));
    expect(seen.get('llm.before')).toEqual(new Set(['s1#1', 's1#2']));
  });

  it('session.start and session.end see the input and its outcome', async () => {
    const { harness } = harnessWith([{ text: 'bye' }]);
    const starts: unknown[] = [];
    const ends: unknown[] = [];
    harness.hooks.register('session.start', (ctx) => void starts.push({ ...ctx }));
    harness.hooks.register('session.end', (ctx) => void ends.push({ ...ctx }));
    await run(harness);
    expect(starts).toEqual([{ sessionId: 's1', inputSeq: 1, resumed: false, directive: undefined }]);
    expect(ends).toEqual([{ sessionId: 's1', inputSeq: 1, status: 'completed', reason: 'completed', finalText: 'bye', directive: undefined }]);
  });

  describe('round.start', () => {
    it('break completes the run with the hook reason, no LLM call', async () => {
      const { harness, llm } = harnessWith([{ text: 'unused' }]);
      harness.hooks.register('round.start', (ctx) => {
        ctx.reason = 'quota';
        return 'break';
      });
      const { result } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: '', rounds: 0 });
      expect(llm.requests).toEqual([]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'quota', status: 'completed' }]);
    });

    it('skip consumes the round without an LLM call', async () => {
      const { harness, llm } = harnessWith([{ text: 'second round' }]);
      harness.hooks.register('round.start', (ctx) => (ctx.roundIndex === 0 ? 'skip' : undefined));
      const { result } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: 'second round', rounds: 2 });
      expect(llm.requests).toHaveLength(1);
      expect(harness.sink.ofType('round_completed').map((event) => event.roundIndex)).toEqual([0, 1]);
      expect(harness.sink.ofType('round_started').map((event) => event.roundIndex)).toEqual([1]);
    });
  });

  describe('llm.before', () => {
    it('short_circuit answers instead of the model, and llm.after does not run', async () => {
      const { harness, llm } = harnessWith([]);
      let afters = 0;
      harness.hooks.register('llm.before', (ctx) => {
        ctx.output = reply('from the cache');
        return 'short_circuit';
      });
      harness.hooks.register('llm.after', () => void (afters += 1));
      const { result, history } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: 'from the cache', rounds: 1 });
      expect(result.usage.llmCalls).toBe(0);
      expect(llm.requests).toEqual([]);
      expect(afters).toBe(0);
      expect(history.at(-1)).toEqual({ role: 'assistant', content: 'from the cache' });
    });

    it('short_circuit without an output fails the run', async () => {
      const { harness } = harnessWith([]);
      harness.hooks.register('llm.before', () => 'short_circuit');
      const { result } = await run(harness);
      expect(result.status).toBe('failed');
      expect(harness.sink.ofType('agent_error')).toHaveLength(1);
    });

    it('break completes without calling the model', async () => {
      const { harness, llm } = harnessWith([{ text: 'unused' }]);
      harness.hooks.register('llm.before', () => 'break');
      const { result } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: '' });
      expect(llm.requests).toEqual([]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'hook_break', status: 'completed' }]);
    });

    it('may edit the request messages in place: the edit reaches that request only, not the window', async () => {
      const harness = new LoopHarness({
        llm: new ScriptedLlm([{ toolCalls: [{ id: 'n1', name: 'noop' }] }, { text: 'done' }]),
        tools: [{ name: 'noop', description: 'No-op', parameters: { type: 'object', properties: {} }, execute: () => 'ok' }],
      });
      const llm = harness.deps.llm as ScriptedLlm;
      harness.hooks.register('llm.before', (ctx) => {
        if (ctx.roundIndex === 0) (ctx.request.messages[0] as { content: string }).content = 'redacted';
      });
      await harness.send('secret');
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'done' });
      expect(llm.requests[0]!.messages[0]).toEqual({ role: 'user', content: 'redacted' });
      expect(llm.requests[1]!.messages[0]).toEqual({ role: 'user', content: 'secret' });
      expect((await harness.history())[0]).toEqual({ role: 'user', content: 'secret' });
    });

    it('persistMessages are appended durably and sent; request edits are not persisted', async () => {
      const { harness, llm } = harnessWith([{ text: 'noted' }]);
      harness.hooks.register('llm.before', (ctx) => {
        ctx.persistMessages.push({ role: 'user', content: 'memory: the user likes tea' });
        ctx.request.messages = [...ctx.request.messages, { role: 'user', content: 'ephemeral hint' }];
        ctx.request.temperature = 0.3;
      });
      const { history } = await run(harness);
      expect(history).toEqual([
        { role: 'user', content: 'go' },
        { role: 'user', content: 'memory: the user likes tea' },
        { role: 'assistant', content: 'noted' },
      ]);
      expect(llm.requests[0]!.messages.slice(1)).toEqual([
        { role: 'user', content: 'ephemeral hint' },
        { role: 'user', content: 'memory: the user likes tea' },
      ]);
      expect(llm.requests[0]!.temperature).toBe(0.3);
    });
  });

  describe('llm.after', () => {
    it('may replace the response', async () => {
      const { harness } = harnessWith([{ text: 'raw' }]);
      harness.hooks.register('llm.after', (ctx) => {
        ctx.response = { ...ctx.response, text: 'redacted' };
      });
      const { result, history } = await run(harness);
      expect(result.finalText).toBe('redacted');
      expect(history.at(-1)).toEqual({ role: 'assistant', content: 'redacted' });
    });

    it('break persists the text and completes, counting the call it made', async () => {
      const { harness } = harnessWith([{ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], text: 'Stop here.', usage: { promptTokens: 10, completionTokens: 4 } }]);
      harness.hooks.register('llm.after', () => 'break');
      const { result, history } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: 'Stop here.', rounds: 1 });
      expect(result.usage).toMatchObject({ promptTokens: 10, completionTokens: 4, llmCalls: 1 });
      expect(history.at(-1)).toEqual({ role: 'assistant', content: 'Stop here.' });
      expect(await harness.store.getUsageRounds(harness.sessionId, 1)).toMatchObject([{ round: 0, llmCalls: 1, promptTokens: 10 }]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'hook_break', status: 'completed' }]);
    });
  });

  describe('round.decide', () => {
    it('skip answers every call with the hook output and goes to the next round', async () => {
      const { harness } = harnessWith([{ text: 'Let me check.', ...twoEchoes }, { text: 'ok' }]);
      const seen: unknown[] = [];
      harness.hooks.register('round.decide', (ctx) => {
        seen.push([ctx.assistantText, ctx.toolCalls.map((call) => call.id)]);
        ctx.output = 'not now';
        return 'skip';
      });
      const { result, history } = await run(harness);
      expect(seen).toEqual([['Let me check.', ['c1', 'c2']]]);
      expect(result).toMatchObject({ status: 'completed', finalText: 'ok', toolCalls: 0 });
      expect(history.slice(2, 4).map((message) => message.content)).toEqual(['not now', 'not now']);
      expect(harness.sink.ofType('tool_call_started')).toEqual([]);
    });

    it('break closes the calls and completes', async () => {
      const { harness, llm } = harnessWith([twoEchoes, { text: 'unused' }]);
      harness.hooks.register('round.decide', () => 'break');
      const { result, history } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', rounds: 1 });
      expect(llm.requests).toHaveLength(1);
      expect(history).toHaveLength(4);
      expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
    });
  });

  it('tools.batch.before skip answers every call with its output', async () => {
    const { harness } = harnessWith([twoEchoes, { text: 'ok' }]);
    harness.hooks.register('tools.batch.before', (ctx) => {
      ctx.output = 'batch refused';
      return 'skip';
    });
    const { history } = await run(harness);
    expect(history.slice(2, 4)).toEqual([
      { role: 'tool', toolCallId: 'c1', name: 'echo', content: 'batch refused' },
      { role: 'tool', toolCallId: 'c2', name: 'echo', content: 'batch refused' },
    ]);
  });

  describe('tool.before', () => {
    it('skip answers one call with the hook output, without tool events', async () => {
      const { harness } = harnessWith([twoEchoes, { text: 'ok' }]);
      harness.hooks.register('tool.before', (ctx) => {
        if (ctx.toolCall.id !== 'c1') return;
        ctx.output = 'denied by policy';
        return 'skip';
      });
      const { result, history } = await run(harness);
      expect(history.slice(2, 4).map((message) => message.content)).toEqual(['denied by policy', 'echo: b']);
      expect(harness.sink.ofType('tool_call_started').map((event) => event.toolCallId)).toEqual(['c2']);
      expect(result.toolCalls).toBe(1);
    });

    it('rewrites the arguments the tool runs with', async () => {
      const { harness } = harnessWith([twoEchoes, { text: 'ok' }]);
      harness.hooks.register('tool.before', (ctx) => {
        if (ctx.toolArgs !== null) ctx.toolArgs = { text: `${String(ctx.toolArgs.text)}!` };
      });
      const { history } = await run(harness);
      expect(history.slice(2, 4).map((message) => message.content)).toEqual(['echo: a!', 'echo: b!']);
    });
  });

  describe('tool.after', () => {
    it('may replace the output and the failed flag', async () => {
      const { harness } = harnessWith([twoEchoes, { text: 'ok' }]);
      harness.hooks.register('tool.after', (ctx) => {
        if (ctx.toolCall.id === 'c2') {
          ctx.output = 'Error: replaced';
          ctx.failed = true;
        }
      });
      const { history } = await run(harness);
      expect(history[3]).toEqual({ role: 'tool', toolCallId: 'c2', name: 'echo', content: 'Error: replaced', isError: true });
      expect(harness.sink.ofType('tool_call_failed').map((event) => event.toolCallId)).toEqual(['c2']);
    });

    it('break while a parallel call still runs: that call is told interrupted (it may have taken effect), not skipped', async () => {
      const entered = deferred();
      const slow = {
        name: 'slow',
        description: 'Keeps running, whatever its signal says',
        parameters: { type: 'object', properties: {} },
        concurrencySafe: true,
        execute: () => {
          entered.resolve();
          return new Promise(() => {});
        },
      };
      const fast = { name: 'fast', description: 'Answers at once', parameters: { type: 'object', properties: {} }, concurrencySafe: true, execute: async () => (await entered.promise, 'fast done') };
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'f1', name: 'fast' }, { id: 's1', name: 'slow' }] }, { text: 'ok' }]);
      const harness = new LoopHarness({ llm, tools: [fast, slow], clock: patientClock });
      harness.hooks.register('tool.after', (ctx) => (ctx.toolCall.id === 'f1' ? 'break' : undefined));
      await harness.send('go');
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'ok' });
      expect((await harness.history()).filter((message) => message.role === 'tool')).toEqual([
        { role: 'tool', toolCallId: 'f1', name: 'fast', content: 'fast done' },
        { role: 'tool', toolCallId: 's1', name: 'slow', content: '[interrupted: tool.after hook stopped the batch; the call had started and may have taken effect]' },
      ]);
      expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
    });

    it('break stops the batch: the rest get a skipped result, no call dangles, the run goes on', async () => {
      const calls = { toolCalls: [...twoEchoes.toolCalls, { id: 'c3', name: 'echo', arguments: { text: 'c' } }] };
      const { harness, llm } = harnessWith([calls, { text: 'ok' }]);
      harness.hooks.register('tool.after', (ctx) => (ctx.toolCall.id === 'c1' ? 'break' : undefined));
      const { result, history } = await run(harness);
      expect(history.slice(2, 5)).toEqual([
        { role: 'tool', toolCallId: 'c1', name: 'echo', content: 'echo: a' },
        { role: 'tool', toolCallId: 'c2', name: 'echo', content: '[skipped: tool.after hook stopped the batch]' },
        { role: 'tool', toolCallId: 'c3', name: 'echo', content: '[skipped: tool.after hook stopped the batch]' },
      ]);
      expect(result).toMatchObject({ status: 'completed', finalText: 'ok', toolCalls: 1 });
      expect(llm.requests).toHaveLength(2);
      expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
      expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
    });

    it('break keeps the real result of a parallel call that had already finished, through tool.after', async () => {
      // `fast` finishes first and waits behind `slow` (earlier in model order); the break comes on `slow`.
      let release = (): void => undefined;
      const slowDone = new Promise<void>((resolve) => (release = resolve));
      const fetchTool = {
        name: 'fetch',
        description: 'Fetch a URL',
        parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
        concurrencySafe: true,
        execute: async (args: { url: string }) => {
          if (args.url === 'slow') await slowDone;
          else release();
          return `page ${args.url}`;
        },
      };
      const llm = new ScriptedLlm([
        { toolCalls: [{ id: 'f1', name: 'fetch', arguments: { url: 'slow' } }, { id: 'f2', name: 'fetch', arguments: { url: 'fast' } }] },
        { text: 'ok' },
      ]);
      const harness = new LoopHarness({ llm, tools: [fetchTool], clock: patientClock });
      const seen: string[] = [];
      harness.hooks.register('tool.after', (ctx) => {
        seen.push(ctx.toolCall.id);
        ctx.output = `${String(ctx.output)} (checked)`;
        return ctx.toolCall.id === 'f1' ? 'break' : undefined;
      });
      const { result, history } = await run(harness);
      expect(seen).toEqual(['f1', 'f2']);
      expect(history.slice(2, 4)).toEqual([
        { role: 'tool', toolCallId: 'f1', name: 'fetch', content: 'page slow (checked)' },
        { role: 'tool', toolCallId: 'f2', name: 'fetch', content: 'page fast (checked)' },
      ]);
      expect(result).toMatchObject({ status: 'completed', finalText: 'ok', toolCalls: 2 });
      expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
    });
  });

  it('compact.before skip prevents the fold', async () => {
    const { harness, llm } = harnessWith([{ text: 'one' }, { text: 'two' }], { contextBudgetTokens: 10, compactKeepLastInputs: 1 });
    let asked = 0;
    harness.hooks.register('compact.before', () => {
      asked += 1;
      return 'skip';
    });
    await run(harness, 'first');
    await run(harness, 'second');
    expect(asked).toBe(1);
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[1]!.messages.map((message) => message.content)).toEqual(['first', 'one', 'second']);
    expect(harness.sink.ofType('status_changed')).toEqual([]);
  });

  describe('message.append', () => {
    it('a mutation is persisted and sent', async () => {
      const { harness, llm } = harnessWith([{ text: 'my key is sk-123' }, { text: 'ok' }]);
      harness.hooks.register('message.append', (ctx) => {
        if (typeof ctx.message.content === 'string') ctx.message.content = ctx.message.content.replace(/sk-\d+/, '[secret]');
      });
      await run(harness, 'first');
      await run(harness, 'use sk-999');
      const history = await harness.history();
      expect(history.map((message) => message.content)).toEqual(['first', 'my key is [secret]', 'use [secret]', 'ok']);
      expect(llm.requests[1]!.messages.map((message) => message.content)).toEqual(['first', 'my key is [secret]', 'use [secret]']);
    });

    it('a replaced message is persisted too', async () => {
      const { harness, llm } = harnessWith([{ text: 'one' }, { text: 'two' }]);
      harness.hooks.register('message.append', (ctx) => {
        if (ctx.message.role === 'user') ctx.message = { ...ctx.message, name: 'alice' };
      });
      await run(harness, 'first');
      await run(harness, 'second');
      expect((await harness.history())[0]).toEqual({ role: 'user', content: 'first', name: 'alice' });
      expect(llm.requests[1]!.messages[2]).toEqual({ role: 'user', content: 'second', name: 'alice' });
    });
  });

  describe('complete.decide', () => {
    it('short_circuit with inject extends the run by extraRounds', async () => {
      const { harness, llm } = harnessWith([{ text: 'draft' }, twoEchoes, { text: 'final' }, { text: 'unused' }]);
      const decisions: unknown[] = [];
      harness.hooks.register('complete.decide', (ctx) => {
        decisions.push([ctx.reason, ctx.finalText, ctx.fireCount]);
        if (ctx.fireCount > 0) return;
        ctx.inject = 'Double-check with the echo tool.';
        ctx.extraRounds = 2;
        return 'short_circuit';
      });
      const { result, history } = await run(harness);
      expect(decisions).toEqual([
        ['completed', 'draft', 0],
        ['completed', 'final', 1],
      ]);
      expect(result).toMatchObject({ status: 'completed', finalText: 'final', rounds: 3, toolCalls: 2 });
      expect(history.slice(0, 3)).toEqual([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'draft' },
        { role: 'user', content: 'Double-check with the echo tool.' },
      ]);
      expect(llm.requests).toHaveLength(3);
      expect(harness.sink.ofType('round_completed').map((event) => event.roundIndex)).toEqual([0, 1, 2]);
    });

    it('the window granted is exact: it does not inherit unused rounds (edge case 28)', async () => {
      const again = { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] };
      const { harness, llm } = harnessWith([{ text: 'draft' }, again, { text: 'wrapped up' }], { maxRounds: 10 });
      harness.hooks.register('complete.decide', (ctx) => {
        if (ctx.reason !== 'completed' || ctx.fireCount > 0) return;
        ctx.inject = 'One more look.';
        ctx.extraRounds = 1;
        return 'short_circuit';
      });
      const { result } = await run(harness);
      expect(result).toMatchObject({ status: 'hit_round_limit', finalText: '[hit_round_limit]\nwrapped up', rounds: 2 });
      expect(llm.requests).toHaveLength(3);
      expect(llm.requests[2]!.messages.at(-1)).toEqual({ role: 'user', content: WRAP_UP_PROMPT(2) });
    });

    it('a budget stop can be given a finalize window', async () => {
      const { harness } = harnessWith(
        [{ ...twoEchoes, usage: { promptTokens: 500, completionTokens: 10 } }, { text: 'summary of work', usage: { promptTokens: 600, completionTokens: 10 } }],
        { maxTokensPerInput: 100 },
      );
      harness.hooks.register('complete.decide', (ctx) => {
        if (ctx.reason !== 'budget_exceeded' || ctx.fireCount > 0) return;
        ctx.inject = 'Budget spent: summarise now.';
        return 'short_circuit';
      });
      const { result, history } = await run(harness);
      expect(result).toMatchObject({ status: 'completed', finalText: 'summary of work', rounds: 2 });
      expect(history.at(-2)).toEqual({ role: 'user', content: 'Budget spent: summarise now.' });
    });
  });

  describe('observers never fail a run', () => {
    it('a throwing sink is reported, and the run completes', async () => {
      const { harness } = harnessWith([twoEchoes, { text: 'done' }]);
      harness.deps.sink = {
        emit: () => {
          throw new Error('sink down');
        },
      };
      await harness.send('go');
      const result = await harness.runNext();
      expect(result).toMatchObject({ status: 'completed', finalText: 'done' });
      expect(protocolViolations(await harness.history())).toEqual([]);
      expect(harness.observerErrors.length).toBeGreaterThan(5);
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'done' });
    });

    it('a throwing session.end hook is reported, and the outcome stands', async () => {
      const { harness } = harnessWith([{ text: 'done' }]);
      harness.hooks.register('session.end', () => {
        throw new Error('end hook bug');
      });
      const { result } = await run(harness);
      expect(result).toMatchObject({ status: 'completed' });
      expect(harness.observerErrors).toHaveLength(1);
      expect(harness.sink.ofType('session_ended')).toHaveLength(1);
    });
  });
});
