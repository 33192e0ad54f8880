import { describe, expect, it } from 'vitest';
import { COMPACT_NOTE_OPEN, SUMMARY_SYSTEM_PROMPT } from '../../../../src/core/compaction/index.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import type { LlmRequest } from '../../../../src/core/ports/llm.js';
import { ScriptedLlm, type ScriptStep } from '../../../../src/llm/scripted-llm.js';
import { LoopHarness, runChecked } from './loop-harness.js';

const lookup = {
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: (args: { q: string }) => `result for ${args.q}: ${'r'.repeat(200)}`,
};

const isSummary = (request: LlmRequest) => request.systemPrompt === SUMMARY_SYSTEM_PROMPT;
const long = (tag: string) => `${tag} ${'x'.repeat(400)}`;

/** Budget 100 tokens (fold at 75), keep the last input: the second input folds the first. */
const profile = { contextBudgetTokens: 100, compactKeepLastInputs: 1 };

async function twoInputs(summaryStep: ScriptStep) {
  const llm = new ScriptedLlm([{ toolCalls: [{ id: 'q1', name: 'lookup', arguments: { q: 'first' } }] }, { text: 'first done' }, summaryStep, { text: 'second done' }]);
  const harness = new LoopHarness({ llm, tools: [lookup], profile });
  await harness.send(long('one'));
  expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'first done' });
  await harness.send(long('two'));
  expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'second done' });
  for (const request of llm.requests) expect(protocolViolations(request.messages)).toEqual([]);
  expect(harness.sink.ofType('session_ended')).toHaveLength(2);
  return { llm, harness };
}

describe('compaction', () => {
  it('folds the old input into one compact note via a summary call; the next request starts with it', async () => {
    const { llm, harness } = await twoInputs({ text: 'The user asked about one; lookup found r.' });
    expect(llm.requests).toHaveLength(4);
    const summary = llm.requests[2]!;
    expect(isSummary(summary)).toBe(true);
    expect(summary.tools).toEqual([]);
    expect(summary.toolChoice).toBeNull();
    const transcript = String(summary.messages[0]!.content);
    expect(transcript).toContain('one xxx');
    expect(transcript).toContain('result for first');

    const next = llm.requests[3]!;
    expect(next.messages).toHaveLength(2);
    expect(next.messages[0]).toEqual({ role: 'user', content: `${COMPACT_NOTE_OPEN}\nThe user asked about one; lookup found r.\n</compact_note>` });
    expect(next.messages[1]).toEqual({ role: 'user', content: long('two') });
    expect(next.messages.some((message) => message.role === 'tool')).toBe(false);

    // The folded rows are kept for inspection, out of the active window.
    const active = await harness.store.loadHistory(harness.sessionId);
    expect(active.map((row) => row.kind)).toEqual(['message', 'compact_note', 'message']);
    const all = await harness.store.loadHistory(harness.sessionId, { includeCompacted: true });
    expect(all.filter((row) => row.state === 'compacted')).toHaveLength(4);
    const events = harness.sink.ofType('status_changed').filter((event) => event.kind === 'auto_compact');
    expect(events.map((event) => event.kind === 'auto_compact' && event.phase)).toEqual(['started', 'completed']);
    expect(protocolViolations(await harness.history())).toEqual([]);
  });

  it('a failing summary call soft-fails: the run goes on with the window unchanged', async () => {
    const { llm, harness } = await twoInputs({ error: new Error('summariser down') });
    expect(llm.requests).toHaveLength(4);
    const next = llm.requests[3]!;
    expect(next.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    const events = harness.sink.ofType('status_changed').filter((event) => event.kind === 'auto_compact');
    expect(events).toMatchObject([{ phase: 'started' }, { phase: 'failed', error: 'summariser down' }]);
    expect((await harness.store.loadHistory(harness.sessionId, { includeCompacted: true })).every((row) => row.state === 'active')).toBe(true);
    expect(harness.sink.ofType('agent_error')).toEqual([]);
  });

  it('an empty summary is a failed summary', async () => {
    const { llm } = await twoInputs({ text: '   ' });
    expect(llm.requests[3]!.messages).toHaveLength(5);
  });

  it('a later fold replaces the earlier note, and never leaves an orphan tool result', async () => {
    const script: ScriptStep[] = [];
    const inputs = 4;
    for (let index = 0; index < inputs; index += 1) {
      if (index > 0) script.push({ text: `summary up to ${index}` });
      script.push({ toolCalls: [{ id: `q${index}`, name: 'lookup', arguments: { q: `n${index}` } }] }, { text: `done ${index}` });
    }
    const llm = new ScriptedLlm(script);
    const harness = new LoopHarness({ llm, tools: [lookup], profile });
    for (let index = 0; index < inputs; index += 1) {
      await harness.send(long(`input ${index}`));
      expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: `done ${index}` });
    }
    const requests = llm.requests.filter((request) => !isSummary(request));
    for (const request of requests) expect(protocolViolations(request.messages)).toEqual([]);
    const last = requests.at(-1)!;
    expect(last.messages[0]!.content).toContain('summary up to 3');
    expect(last.messages.filter((message) => String(message.content).startsWith(COMPACT_NOTE_OPEN))).toHaveLength(1);
    // The second summary was given the first note to carry forward.
    const summaries = llm.requests.filter(isSummary);
    expect(String(summaries[1]!.messages[0]!.content)).toContain('summary up to 1');
    expect(protocolViolations(await harness.history())).toEqual([]);
  });
});
