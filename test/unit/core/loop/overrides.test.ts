import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { crashable, LoopHarness, runChecked, StoreCrashed } from './loop-harness.js';

const tool = (name: string) => ({
  name,
  description: `The ${name} tool`,
  parameters: { type: 'object', properties: {} },
  execute: () => `${name} ran`,
});

const GAVE_UP = {
  status: 'failed' as const,
  finalText: '',
  rounds: 0,
  toolCalls: 0,
  usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0, costUsd: 0, costPicoUsd: 0 },
};

const answerFormat = {
  name: 'answer',
  schema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'], additionalProperties: false },
};

describe('per-input overrides', () => {
  describe('tools allowlist', () => {
    it('the model only sees, and can only call, the allowed tools', async () => {
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'x1', name: 'write' }, { id: 'x2', name: 'read' }] }, { text: 'ok' }, { text: 'all tools' }]);
      const harness = new LoopHarness({ llm, tools: [tool('read'), tool('write'), tool('search')] });
      await harness.send('look only', { tools: ['read', 'search'] });
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'completed', toolCalls: 1 });
      expect(llm.requests[0]!.tools.map((spec) => spec.name)).toEqual(['read', 'search']);
      const history = await harness.history();
      expect(String(history[2]!.content)).toMatch(/^Error: unknown tool "write"/);
      expect(history[3]).toMatchObject({ toolCallId: 'x2', content: 'read ran' });
      expect(protocolViolations(history)).toEqual([]);
      // The next input is not restricted.
      await harness.send('anything');
      await runChecked(harness);
      expect(llm.requests[2]!.tools.map((spec) => spec.name)).toEqual(['read', 'write', 'search']);
    });

    it('calls left open by a restricted input run with its allowlist, even when a resume (allowed every tool) runs them', async () => {
      const ran: string[] = [];
      const counted = (name: string) => Object.assign(tool(name), { execute: () => (ran.push(name), `${name} ran`) });
      const store = crashable(new InMemorySessionStore());
      const llm = new ScriptedLlm([{ toolCalls: [{ id: 'a1', name: 'read' }, { id: 's1', name: 'secret' }] }, { text: 'after the resume' }]);
      const harness = new LoopHarness({ llm, tools: [counted('read'), counted('secret')], store });
      const seq = await harness.send('read only', { tools: ['read'] });
      // The worker dies once the assistant step (the calls, their pending state) is committed.
      store.crashAfter(2);
      await expect(harness.runNext()).rejects.toBeInstanceOf(StoreCrashed);
      store.crashAfter(Number.POSITIVE_INFINITY);
      expect((await store.getSession(harness.sessionId))?.pending).toMatchObject({ unresolvedIds: ['a1', 's1'], allowedTools: ['read'] });
      // That input is given up (as the poison-input stop does); a resume then runs its open calls.
      const lease = await store.acquireLease({ sessionId: harness.sessionId, owner: 'test', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('the lease should be free');
      await store.commitStep({ sessionId: harness.sessionId, leaseToken: lease.token, input: { seq, status: 'failed', result: GAVE_UP, errorCode: 'system.infrastructure', errorMessage: 'gave up' } });
      await store.releaseLease({ sessionId: harness.sessionId, token: lease.token });
      await harness.add('resume', {});
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'after the resume' });
      // read ran before the crash and again on resume (in doubt, its policy is retry); secret never did.
      expect(ran).toEqual(['read', 'read']);
      const results = (await harness.history()).filter((message) => message.role === 'tool');
      expect(results.map((message) => [message.toolCallId, String(message.content).slice(0, 24)])).toEqual([
        ['a1', 'read ran'],
        ['s1', 'Error: unknown tool "sec'],
      ]);
    });

    it('an empty allowlist offers no tools and no tool choice', async () => {
      const llm = new ScriptedLlm([{ text: 'plain' }]);
      const harness = new LoopHarness({ llm, tools: [tool('read')] });
      await harness.send('no tools', { tools: [] });
      await runChecked(harness);
      expect(llm.requests[0]).toMatchObject({ tools: [], toolChoice: null });
    });

    it('an unknown tool name fails the input with input.invalid before anything is written', async () => {
      const llm = new ScriptedLlm([]);
      const harness = new LoopHarness({ llm, tools: [tool('read')] });
      await harness.send('x', { tools: ['read', 'rm_rf'] });
      expect(await runChecked(harness)).toMatchObject({ status: 'failed', rounds: 0 });
      const input = await harness.store.getInput(harness.sessionId, 1);
      expect(input).toMatchObject({ status: 'failed', errorCode: 'input.invalid' });
      expect(input!.errorMessage).toContain('rm_rf');
      expect(await harness.history()).toEqual([]);
      expect(llm.requests).toEqual([]);
      expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'error', status: 'failed' }]);
    });
  });

  describe('system prompt precedence: input > session > profile', () => {
    async function promptFor(options: { profile?: string; session?: string; input?: string }): Promise<string | null> {
      const llm = new ScriptedLlm([{ text: 'ok' }]);
      const harness = new LoopHarness({ llm, profile: options.profile === undefined ? {} : { systemPrompt: options.profile } });
      if (options.session !== undefined) await harness.store.createSession({ id: harness.sessionId, systemPrompt: options.session });
      await harness.send('hi', options.input === undefined ? undefined : { systemPrompt: options.input });
      await runChecked(harness);
      return llm.requests[0]!.systemPrompt;
    }

    it('uses the profile prompt by default', async () => {
      expect(await promptFor({ profile: 'P' })).toBe('P');
      expect(await promptFor({})).toBeNull();
    });

    it('a session prompt beats the profile', async () => {
      expect(await promptFor({ profile: 'P', session: 'S' })).toBe('S');
    });

    it('an input prompt beats both, for that input only', async () => {
      expect(await promptFor({ profile: 'P', session: 'S', input: 'I' })).toBe('I');
      const llm = new ScriptedLlm([{ text: 'a' }, { text: 'b' }]);
      const harness = new LoopHarness({ llm, profile: { systemPrompt: 'P' } });
      await harness.send('one', { systemPrompt: 'I' });
      await harness.send('two');
      await runChecked(harness);
      await runChecked(harness);
      expect(llm.requests.map((request) => request.systemPrompt)).toEqual(['I', 'P']);
      // The prompt is never part of the history.
      expect((await harness.history()).some((message) => message.role === 'system')).toBe(false);
    });
  });

  it('maxRounds applies to one input', async () => {
    const loop = () => ({ toolCalls: [{ name: 'read' }] });
    const llm = new ScriptedLlm([loop, { text: 'wrap' }, loop, loop, { text: 'done' }]);
    const harness = new LoopHarness({ llm, tools: [tool('read')], profile: { maxRounds: 5 } });
    await harness.send('short', { maxRounds: 1 });
    await harness.send('normal');
    expect(await runChecked(harness)).toMatchObject({ status: 'hit_round_limit', rounds: 1, finalText: '[hit_round_limit]\nwrap' });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', rounds: 3, finalText: 'done' });
  });

  it('maxTokensPerInput applies to one input', async () => {
    const big = { usage: { promptTokens: 1000, completionTokens: 1 } };
    const llm = new ScriptedLlm([{ ...big, toolCalls: [{ name: 'read' }] }, { ...big, toolCalls: [{ name: 'read' }] }, { ...big, text: 'done' }]);
    const harness = new LoopHarness({ llm, tools: [tool('read')] });
    await harness.send('cheap', { maxTokensPerInput: 10 });
    await harness.send('unbounded');
    expect(await runChecked(harness)).toMatchObject({ status: 'budget_exceeded', rounds: 1 });
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', rounds: 2 });
  });

  describe('responseFormat (structured output)', () => {
    it('parses a fenced JSON reply into output and forwards the format to the provider', async () => {
      const llm = new ScriptedLlm([{ text: 'Here you go:\n```json\n{"value": 42}\n```' }]);
      const harness = new LoopHarness({ llm });
      await harness.send('compute', { responseFormat: answerFormat });
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'completed', output: { value: 42 } });
      expect(llm.requests[0]!.responseFormat).toEqual(answerFormat);
      expect((await harness.store.getInput(harness.sessionId, 1))!.result).toMatchObject({ output: { value: 42 } });
    });

    it('an invalid reply gets one corrective round', async () => {
      const llm = new ScriptedLlm([{ text: 'forty-two' }, { text: '{"value": 42}' }]);
      const harness = new LoopHarness({ llm });
      await harness.send('compute', { responseFormat: answerFormat });
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'completed', output: { value: 42 }, rounds: 2 });
      const history = await harness.history();
      expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(String(history[2]!.content)).toContain('"answer"');
      expect(llm.requests[1]!.messages.at(-1)).toEqual(history[2]);
    });

    it('invalid twice fails the input with output.invalid', async () => {
      const llm = new ScriptedLlm([{ text: 'forty-two' }, { text: '{"value": "42"}' }, { text: 'unused' }]);
      const harness = new LoopHarness({ llm });
      await harness.send('compute', { responseFormat: answerFormat });
      const result = await runChecked(harness);
      expect(result).toMatchObject({ status: 'failed', finalText: '{"value": "42"}', rounds: 2 });
      expect(result!.output).toBeUndefined();
      expect(llm.requests).toHaveLength(2);
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ status: 'failed', errorCode: 'output.invalid' });
      expect(protocolViolations(await harness.history())).toEqual([]);
      expect(harness.sink.ofType('session_ended')).toHaveLength(1);
    });

    it('an invalid schema fails the input with input.invalid before any call', async () => {
      const llm = new ScriptedLlm([]);
      const harness = new LoopHarness({ llm });
      await harness.send('compute', { responseFormat: { name: 'list', schema: { type: 'array' } } });
      expect(await runChecked(harness)).toMatchObject({ status: 'failed' });
      expect(await harness.store.getInput(harness.sessionId, 1)).toMatchObject({ errorCode: 'input.invalid' });
      expect(llm.requests).toEqual([]);
    });

    it('a profile response format applies to every input', async () => {
      const llm = new ScriptedLlm([{ text: '{"value": 1}' }]);
      const harness = new LoopHarness({ llm, profile: { responseFormat: answerFormat } });
      await harness.send('compute');
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', output: { value: 1 } });
    });
  });
});
