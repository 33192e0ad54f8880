import { describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { crashable, LoopHarness, runChecked, StoreCrashed } from './loop-harness.js';

const noop = {
  name: 'noop',
  description: 'Does nothing',
  parameters: { type: 'object', properties: {} },
  execute: () => 'ok',
};

describe('usage per input and per session', () => {
  it('sums this input\'s calls, writes one usage row per round (tool rounds too), and bumps the session once', async () => {
    const llm = new ScriptedLlm([
      { toolCalls: [{ name: 'noop' }], usage: { promptTokens: 100, completionTokens: 10, cachedTokens: 40, cacheWriteTokens: 25, totalTokens: 110 } },
      { text: 'done', usage: { promptTokens: 150, completionTokens: 5, reasoningTokens: 2, totalTokens: 155 } },
      { text: 'second', usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 } },
    ]);
    const harness = new LoopHarness({ llm, tools: [noop] });
    await harness.send('first');
    const first = await runChecked(harness);
    // No price table in this harness: the calls are unpriced, and say so.
    expect(first!.usage).toEqual({ promptTokens: 250, completionTokens: 15, cachedTokens: 40, cacheWriteTokens: 25, reasoningTokens: 2, totalTokens: 265, llmCalls: 2, costUsd: 0, costPicoUsd: 0, unpricedCalls: 2 });
    const rows = await harness.store.getUsageRounds(harness.sessionId, 1);
    expect(rows.map((row) => [row.round, row.promptTokens, row.completionTokens, row.cachedTokens, row.cacheWriteTokens, row.llmCalls, row.model, row.provider])).toEqual([
      [0, 100, 10, 40, 25, 1, 'scripted', 'scripted'],
      [1, 150, 5, 0, 0, 1, 'scripted', 'scripted'],
    ]);
    expect(harness.sink.ofType('usage_updated').map((event) => [event.roundIndex, event.usage.promptTokens])).toEqual([
      [0, 100],
      [1, 150],
    ]);

    await harness.send('second');
    const second = await runChecked(harness);
    // Per input, not cumulative.
    expect(second!.usage).toEqual({ promptTokens: 7, completionTokens: 3, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 10, llmCalls: 1, costUsd: 0, costPicoUsd: 0, unpricedCalls: 1 });
    expect(await harness.store.getUsageRounds(harness.sessionId, 2)).toHaveLength(1);
    const stats = (await harness.store.getSession(harness.sessionId))!.stats;
    expect(stats).toMatchObject({
      inputs: 2,
      rounds: 3,
      llmCalls: 3,
      toolCalls: 1,
      promptTokens: 257,
      completionTokens: 18,
      cachedTokens: 40,
      cacheWriteTokens: 25,
      reasoningTokens: 2,
      totalTokens: 275,
    });
  });

  it('retried attempts count as calls, and the wrap-up call has its own row', async () => {
    const llm = new ScriptedLlm([
      { error: Object.assign(new Error('busy'), { status: 529 }) },
      { toolCalls: [{ name: 'noop' }], usage: { promptTokens: 10, completionTokens: 1 } },
      { text: 'summary', usage: { promptTokens: 20, completionTokens: 2 } },
    ]);
    const harness = new LoopHarness({ llm, tools: [noop], profile: { maxRounds: 1 } });
    await harness.send('go');
    const result = await runChecked(harness);
    expect(result).toMatchObject({ status: 'hit_round_limit', rounds: 1 });
    expect(result!.usage).toMatchObject({ promptTokens: 30, completionTokens: 3, llmCalls: 3 });
    expect((await harness.store.getUsageRounds(harness.sessionId, 1)).map((row) => [row.round, row.llmCalls])).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect((await harness.store.getSession(harness.sessionId))!.stats).toMatchObject({ inputs: 1, rounds: 1, llmCalls: 3 });
  });

  it('a taken-over input keeps counting the usage spent before the crash, once', async () => {
    const store = new InMemorySessionStore();
    const worker = crashable(store);
    // Commits: user message with the tool request (+ round 0 usage and the ledger start), tool result; then the worker dies.
    worker.crashAfter(2);
    const script = () => [
      { toolCalls: [{ id: 'n1', name: 'noop' }], usage: { promptTokens: 100, completionTokens: 10 } },
      { text: 'done', usage: { promptTokens: 200, completionTokens: 20 } },
    ];
    const first = new LoopHarness({ llm: new ScriptedLlm(script()), tools: [noop], store: worker });
    await first.send('go');
    await expect(first.runNext()).rejects.toBeInstanceOf(StoreCrashed);
    const llm = new ScriptedLlm(script().slice(1));
    const second = new LoopHarness({ llm, tools: [noop], store });
    const result = await runChecked(second);
    expect(result).toMatchObject({ status: 'completed', rounds: 2, toolCalls: 1 });
    expect(result!.usage).toMatchObject({ promptTokens: 300, completionTokens: 30, llmCalls: 2 });
    expect(llm.requests).toHaveLength(1);
    expect((await store.getSession('s1'))!.stats).toMatchObject({ inputs: 1, rounds: 2, llmCalls: 2, promptTokens: 300 });
  });
});
