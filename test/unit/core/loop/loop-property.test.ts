import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrangeWindow } from '../../../../src/core/compaction/index.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import type { LlmRequest } from '../../../../src/core/ports/llm.js';
import { ScriptedLlm, type ScriptStep } from '../../../../src/llm/scripted-llm.js';
import { crashAfterCommits, SimulatedCrash } from '../../../support/fakes/crashing-store.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { LoopHarness } from './loop-harness.js';

const okTool = {
  name: 'ok',
  description: 'succeeds',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  concurrencySafe: true,
  execute: (args: { n: number }) => `ok ${args.n}`,
};
const boomTool = {
  name: 'boom',
  description: 'always throws',
  parameters: { type: 'object', properties: {} },
  execute: () => {
    throw new Error('kaboom');
  },
};

const callArb = fc.oneof(
  fc.record({ name: fc.constant('ok'), arguments: fc.integer({ min: 0, max: 9 }).map((n) => JSON.stringify({ n })) }),
  fc.record({ name: fc.constant('ok'), arguments: fc.constant('{"n": "not a number"}') }),
  fc.record({ name: fc.constant('ok'), arguments: fc.constant('{"n": 1') }),
  fc.record({ name: fc.constant('boom'), arguments: fc.constant('{}') }),
  fc.record({ name: fc.constant('nope'), arguments: fc.constant('{}') }),
);

const stepArb: fc.Arbitrary<ScriptStep> = fc.oneof(
  fc.record({ text: fc.constantFrom('', 'fine', 'a longer answer with several words in it') }),
  fc.record({ text: fc.constant('cut'), finishReason: fc.constant('length' as const) }),
  fc.record({ toolCalls: fc.array(callArb, { minLength: 1, maxLength: 3 }), finishReason: fc.constantFrom('tool_calls' as const, 'length' as const) }),
  fc.constant({ error: Object.assign(new Error('service unavailable'), { status: 503 }) }),
  fc.constant({ error: Object.assign(new Error('bad request'), { status: 400 }) }),
);

const scenarioArb = fc.record({
  inputs: fc.integer({ min: 1, max: 3 }),
  script: fc.array(stepArb, { minLength: 1, maxLength: 14 }),
  maxRounds: fc.integer({ min: 1, max: 5 }),
  contextBudgetTokens: fc.constantFrom(60, 150, 100_000),
  crashAt: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
});

/**
 * Random scripts of replies, tool calls (valid, invalid, truncated, failing, unknown), provider
 * errors, compactions and a crash point: whatever happens, the stored history is protocol-valid (I4),
 * every request the model saw was too, and every input ends in exactly one terminal status (I6).
 */
describe('loop invariants under random scripts', () => {
  it('keeps I4 and I6', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const store = new InMemorySessionStore();
        // Summary calls (compaction) and anything past the script get a plain answer.
        const llm = new ScriptedLlm(scenario.script, { whenExhausted: 'echo' });
        const profile = { maxRounds: scenario.maxRounds, contextBudgetTokens: scenario.contextBudgetTokens, compactKeepLastInputs: 1 };
        const first = new LoopHarness({ llm, tools: [okTool, boomTool], store: scenario.crashAt === null ? store : crashAfterCommits(store, scenario.crashAt), profile });
        for (let index = 0; index < scenario.inputs; index += 1) await first.send(`input ${index}`);
        await drainAll(first);
        const second = new LoopHarness({ llm, tools: [okTool, boomTool], store, profile });
        await drainAll(second);

        const window = arrangeWindow(await store.loadWindow('s1')).map((row) => row.message);
        expect(protocolViolations(window)).toEqual([]);
        for (const request of llm.requests) expect(protocolViolations(request.messages, { allowTrailingPending: false })).toEqual([]);
        const inputs = await store.listInputs('s1');
        expect(inputs).toHaveLength(scenario.inputs);
        for (const input of inputs) {
          expect(['done', 'failed', 'cancelled']).toContain(input.status);
          expect(input.result).not.toBeNull();
        }
        const ended = [...first.sink.ofType('session_ended'), ...second.sink.ofType('session_ended')];
        expect(ended).toHaveLength(scenario.inputs);
        expect((await store.getSession('s1'))!.pending).toBeNull();
        expect(requestsAreSane(llm.requests)).toBe(true);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});

async function drainAll(harness: LoopHarness): Promise<void> {
  for (;;) {
    try {
      if ((await harness.runNext()) === null) return;
    } catch (error) {
      if (error instanceof SimulatedCrash) return;
      throw error;
    }
  }
}

/** Tools offered only with `auto`/`none`, never `auto` without tools. */
function requestsAreSane(requests: readonly LlmRequest[]): boolean {
  return requests.every((request) => (request.tools.length === 0 ? request.toolChoice === null : request.toolChoice !== null));
}
