import { describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { echoTool, LoopHarness } from './loop-harness.js';

describe('runInput: a plain run', () => {
  it('completes with the model text, persisting user and assistant messages', async () => {
    const harness = new LoopHarness({ llm: new ScriptedLlm([{ chunks: ['Hel', 'lo'] }]) });
    await harness.send('hi');
    const result = await harness.runNext();
    expect(result).toMatchObject({ status: 'completed', finalText: 'Hello', rounds: 1, toolCalls: 0 });
    expect(result!.usage.llmCalls).toBe(1);
    expect(await harness.history()).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
    const input = await harness.store.getInput(harness.sessionId, 1);
    expect(input).toMatchObject({ status: 'done', result: { status: 'completed', finalText: 'Hello' } });
    expect(harness.sink.ofType('stream_delta').map((event) => event.text)).toEqual(['Hel', 'lo']);
    expect(harness.sink.ofType('session_ended')).toEqual([{ type: 'session_ended', reason: 'completed', status: 'completed' }]);
    const session = await harness.store.getSession(harness.sessionId);
    expect(session!.stats).toMatchObject({ inputs: 1, rounds: 1, llmCalls: 1 });
  });

  it('runs a tool round then answers, through the ledger', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'done' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool] });
    await harness.send('go');
    const result = await harness.runNext();
    expect(harness.sink.ofType('agent_error')).toEqual([]);
    expect(result).toMatchObject({ status: 'completed', finalText: 'done', rounds: 2, toolCalls: 1 });
    const history = await harness.history();
    expect(history[2]).toEqual({ role: 'tool', toolCallId: 'c1', name: 'echo', content: 'echo: x' });
    expect(protocolViolations(history)).toEqual([]);
    expect(llm.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'echo: x' });
    expect(llm.requests[0]!.toolChoice).toBe('auto');
    expect(await harness.store.loadOpenToolCalls(harness.sessionId)).toEqual([]);
    expect((await harness.store.getSession(harness.sessionId))!.pending).toBeNull();
  });
});
