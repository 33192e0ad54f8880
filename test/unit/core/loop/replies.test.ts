import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { TRUNCATION_NOTICE } from '../../../../src/core/loop/run-round.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { LoopHarness, runChecked } from './loop-harness.js';

const writeTool = {
  name: 'write_file',
  description: 'Write a file',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  execute: (args: { path: string }) => `wrote ${args.path}`,
};

describe('empty replies are not completions (power-loop edge case 23)', () => {
  it('retries two empty replies, then completes with the text', async () => {
    const llm = new ScriptedLlm([{}, { text: '   ' }, { text: 'Here it is.' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('answer me');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'Here it is.', rounds: 3 });
    expect(result!.usage.llmCalls).toBe(3);
    expect(llm.requests).toHaveLength(3);
    // Empty replies leave nothing in the history: the retry asks again with the same context.
    expect(await harness.history()).toEqual([
      { role: 'user', content: 'answer me' },
      { role: 'assistant', content: 'Here it is.' },
    ]);
    expect(harness.sink.ofType('round_completed').map((event) => event.roundIndex)).toEqual([0, 1, 2]);
    expect((await harness.store.getUsageRounds(harness.sessionId, 1)).map((row) => row.round)).toEqual([0, 1, 2]);
    expect(harness.sink.ofType('session_ended')).toHaveLength(1);
  });

  it('completes with empty text after emptyResponseRetries more empty replies', async () => {
    const llm = new ScriptedLlm([{}, {}, {}, {}, { text: 'never asked' }]);
    const harness = new LoopHarness({ llm, profile: { emptyResponseRetries: 3 } });
    await harness.send('answer me');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: '', rounds: 4 });
    expect(llm.requests).toHaveLength(4);
    expect(await harness.history()).toEqual([{ role: 'user', content: 'answer me' }]);
  });

  it('the round limit still bounds empty retries', async () => {
    const llm = new ScriptedLlm([{}, {}, { text: 'summary' }]);
    const harness = new LoopHarness({ llm, profile: { maxRounds: 2 } });
    await harness.send('answer me');
    expect(await runChecked(harness)).toMatchObject({ status: 'hit_round_limit', finalText: '[hit_round_limit]\nsummary', rounds: 2 });
  });
});

describe('truncated replies (power-loop edge cases 3 and 24)', () => {
  it('a reply cut by the length limit gets a notice and the run continues', async () => {
    const llm = new ScriptedLlm([{ text: 'The first half of', finishReason: 'length' }, { text: 'The short answer.' }]);
    const harness = new LoopHarness({ llm });
    await harness.send('write an essay');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'The short answer.', rounds: 2 });
    expect(await harness.history()).toEqual([
      { role: 'user', content: 'write an essay' },
      { role: 'assistant', content: 'The first half of' },
      { role: 'user', content: TRUNCATION_NOTICE },
      { role: 'assistant', content: 'The short answer.' },
    ]);
    // The next request is not the identical prompt again.
    expect(llm.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: TRUNCATION_NOTICE });
    const rows = await harness.store.loadHistory(harness.sessionId);
    expect(rows[2]).toMatchObject({ kind: 'notice', round: 0 });
  });

  it('accepts the reply after truncationNotices consecutive notices', async () => {
    const llm = new ScriptedLlm([
      { text: 'a', finishReason: 'length' },
      { text: 'b', finishReason: 'length' },
      { text: 'c', finishReason: 'length' },
    ]);
    const harness = new LoopHarness({ llm, profile: { truncationNotices: 2 } });
    await harness.send('go');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'c', rounds: 3 });
    expect((await harness.history()).filter((message) => message.content === TRUNCATION_NOTICE)).toHaveLength(2);
  });

  it('truncated tool arguments are never repaired: the tool gets invalid_args and the notice follows ALL results', async () => {
    let writes = 0;
    const counting = { ...writeTool, execute: (args: { path: string }) => `wrote ${args.path} (${++writes})` };
    const llm = new ScriptedLlm([
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'a.txt', content: 'whole' } },
          { id: 'w2', name: 'write_file', arguments: '{"path": "b.txt", "content": "half of the fi' },
        ],
        finishReason: 'length',
      },
      { text: 'Split it up.' },
    ]);
    const harness = new LoopHarness({ llm, tools: [counting] });
    await harness.send('write two files');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'completed', finalText: 'Split it up.', toolCalls: 1 });
    expect(writes).toBe(1);
    const history = await harness.history();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
    expect(history[2]).toEqual({ role: 'tool', toolCallId: 'w1', name: 'write_file', content: 'wrote a.txt (1)' });
    expect(history[3]).toMatchObject({ role: 'tool', toolCallId: 'w2', isError: true });
    expect(String(history[3]!.content)).toMatch(/^Error: arguments are not valid JSON/);
    expect(history[4]).toEqual({ role: 'user', content: TRUNCATION_NOTICE });
    expect(protocolViolations(history)).toEqual([]);
    for (const request of llm.requests) expect(protocolViolations(request.messages)).toEqual([]);
    const ledger = await harness.store.loadOpenToolCalls(harness.sessionId);
    expect(ledger).toEqual([]);
    expect(harness.sink.ofType('tool_call_failed')).toMatchObject([{ toolCallId: 'w2', errorCode: 'tool.invalid_args' }]);
  });

  it('a length finish with complete tool arguments adds no notice', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'a', content: 'b' } }], finishReason: 'length' },
      { text: 'done' },
    ]);
    const harness = new LoopHarness({ llm, tools: [writeTool] });
    await harness.send('go');
    await runChecked(harness);
    expect((await harness.history()).some((message) => message.content === TRUNCATION_NOTICE)).toBe(false);
  });
});
