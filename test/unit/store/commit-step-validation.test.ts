import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StepCommit } from '../../../src/core/ports/session-store.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { checkedStep } from '../../../src/store/steps/commit-step-fast-check.js';
import { stepSchema } from '../../../src/store/steps/commit-step-schema.js';
import { validateStep } from '../../../src/store/steps/commit-step-validation.js';
import { InMemorySessionStore } from '../../support/fakes/in-memory-session-store.js';
import { echoTool, LoopHarness } from '../core/loop/loop-harness.js';

/** Records every step a run commits. */
class StepRecordingStore extends InMemorySessionStore {
  readonly steps: StepCommit[] = [];

  override commitStep(step: StepCommit) {
    this.steps.push(structuredClone(step));
    return super.commitStep(step);
  }
}

const seq = fc.integer({ min: 1, max: 1_000_000 });
const int4 = fc.integer({ min: 0, max: 2_147_483_647 });
const id = fc.string({ minLength: 1, maxLength: 12 });
const toolCall = fc.record({ id, name: id, arguments: fc.string() });
const content = fc.oneof(
  fc.string(),
  fc.array(
    fc.oneof(
      fc.record({ type: fc.constant('text' as const), text: fc.string() }),
      fc.record({ type: fc.constant('image' as const), url: id, mediaType: fc.string() }, { requiredKeys: ['type', 'url'] }),
    ),
    { maxLength: 3 },
  ),
);
const message = fc.oneof(
  fc.record({ role: fc.constant('system' as const), content: fc.string() }),
  fc.record({ role: fc.constant('user' as const), content, name: fc.string() }, { requiredKeys: ['role', 'content'] }),
  fc.record({ role: fc.constant('assistant' as const), content, toolCalls: fc.array(toolCall, { maxLength: 3 }) }, { requiredKeys: ['role', 'content'] }),
  fc.record({ role: fc.constant('tool' as const), content, toolCallId: id, name: fc.string(), isError: fc.boolean() }, { requiredKeys: ['role', 'content', 'toolCallId', 'name'] }),
);
const stepMessage = fc.record({
  inputSeq: fc.option(seq, { nil: null }),
  round: fc.option(int4, { nil: null }),
  kind: fc.constantFrom('message', 'compact_note', 'notice', 'degraded', 'synthetic_tool_result'),
  message,
});
const pending = fc
  .array(toolCall, { minLength: 1, maxLength: 3 })
  .chain((calls) =>
    fc.record({
      assistantSeq: int4,
      round: int4,
      inputSeq: int4,
      toolCalls: fc.constant(calls),
      unresolvedIds: fc.subarray(calls.map((call) => call.id), { minLength: 1 }),
      interactions: fc.constant([]),
      allowedTools: fc.option(fc.array(fc.oneof(fc.constantFrom('read_file', 'search'), fc.string({ minLength: 1, maxLength: 3 })), { maxLength: 3 }), { nil: null }),
    }, { requiredKeys: ['assistantSeq', 'round', 'inputSeq', 'toolCalls', 'unresolvedIds', 'interactions'] }),
  );
const ledgerRow = (toolCallId: string) =>
  fc.record(
    {
      toolCallId: fc.constant(toolCallId),
      inputSeq: seq,
      round: int4,
      name: id,
      args: fc.jsonValue(),
      status: fc.constantFrom('started', 'completed', 'failed', 'in_doubt', 'aborted'),
      errorCode: fc.option(fc.string(), { nil: null }),
      durationMs: fc.option(int4, { nil: null }),
    },
    { requiredKeys: ['toolCallId', 'inputSeq', 'round', 'name', 'args', 'status'] },
  );
const usageRound = (inputSeq: number, round: number) =>
  fc.record({
    inputSeq: fc.constant(inputSeq),
    round: fc.constant(round),
    provider: id,
    model: id,
    llmCalls: int4,
    promptTokens: int4,
    completionTokens: int4,
    cachedTokens: int4,
    cacheWriteTokens: int4,
    reasoningTokens: int4,
    totalTokens: int4,
    costPicoUsd: fc.option(fc.nat(), { nil: null }),
  });
const count = fc.nat();
const result = fc.record(
  {
    status: fc.constantFrom('completed', 'waiting_for_input', 'cancelled', 'hit_round_limit', 'budget_exceeded', 'degraded', 'failed'),
    finalText: fc.string(),
    rounds: count,
    toolCalls: count,
    usage: fc.record({ promptTokens: count, completionTokens: count, cachedTokens: count, cacheWriteTokens: count, reasoningTokens: count, totalTokens: count, llmCalls: count, costUsd: fc.double({ min: 0, max: 1e6, noNaN: true }), costPicoUsd: count }),
    output: fc.jsonValue(),
    steeredInto: seq,
  },
  { requiredKeys: ['status', 'finalText', 'rounds', 'toolCalls', 'usage'] },
);
const transition = fc.record(
  { seq, status: fc.constantFrom('done', 'failed', 'cancelled'), result, errorCode: id, errorMessage: fc.string() },
  { requiredKeys: ['seq', 'status'] },
);

/** Steps inside the fast path's domain: well-formed, no compaction, steering or question for a human. */
const validStep = fc.record(
  {
    sessionId: fc.constant('s1'),
    leaseToken: fc.constant(7),
    messages: fc.array(stepMessage, { maxLength: 3 }),
    pending: fc.option(pending, { nil: null }),
    toolCalls: fc.uniqueArray(id, { maxLength: 3 }).chain((ids) => fc.tuple(...ids.map(ledgerRow))),
    usageRounds: fc.uniqueArray(fc.tuple(seq, int4), { maxLength: 2, selector: ([s, r]) => `${s}/${r}` }).chain((keys) => fc.tuple(...keys.map(([s, r]) => usageRound(s, r)))),
    input: transition,
  },
  { requiredKeys: ['sessionId', 'leaseToken', 'messages'] },
);

/** Values a mutation puts in place of a part: wrong types, edges of every range, look-alikes. */
const oddValue = fc.constantFrom<unknown>(
  undefined, null, '', 'x', 'done', 'message', 'user', 'text', 'completed', 'started', 0, -0, -1, 1, 1.5, NaN, Infinity,
  2_147_483_647, 2_147_483_648, Number.MAX_SAFE_INTEGER, 2 ** 53, true, [], {}, [{}], 'x'.repeat(501), [null], new Date(0),
);

type Mutation = { at: number; how: 'replace' | 'delete' | 'extra' | 'duplicate'; value: unknown };
const mutation = fc.record({ at: fc.nat(), how: fc.constantFrom<Mutation['how']>('replace', 'replace', 'delete', 'extra', 'duplicate'), value: oddValue });

/** Every object and array inside `value`, with the root. */
function containers(value: unknown, into: (Record<string, unknown> | unknown[])[] = []): (Record<string, unknown> | unknown[])[] {
  if (typeof value !== 'object' || value === null || value instanceof Date) return into;
  into.push(value as Record<string, unknown>);
  for (const child of Object.values(value)) containers(child, into);
  return into;
}

function mutate(step: unknown, mutations: Mutation[]): unknown {
  for (const { at, how, value: shared } of mutations) {
    const value: unknown = structuredClone(shared);
    const all = containers(step);
    const target = all[at % all.length]!;
    const keys = Object.keys(target);
    if (Array.isArray(target)) {
      if (how === 'duplicate' && target.length > 0) target.push(structuredClone(target[at % target.length]));
      else if (how === 'delete') target.splice(at % Math.max(1, target.length), 1);
      else target[at % Math.max(1, target.length)] = value;
    } else if (how === 'extra') {
      target['unexpected'] = value;
    } else if (keys.length > 0) {
      const key = keys[at % keys.length]!;
      if (how === 'delete') delete target[key];
      else target[key] = value;
    }
  }
  return step;
}

describe('validateStep: the fast path agrees with the schema', () => {
  it('accepts every well-formed common step, returning what the schema returns', () => {
    fc.assert(
      fc.property(validStep, (step) => {
        const checked = checkedStep(step as StepCommit);
        expect(checked).toBeDefined();
        expect(checked).toEqual(stepSchema.parse(step));
      }),
      { numRuns: 500 },
    );
  });

  it('never vouches for a step the schema refuses or would change, whatever is broken in it', () => {
    const seen = { vouched: 0, refusedByBoth: 0 };
    fc.assert(
      fc.property(validStep, fc.array(mutation, { minLength: 1, maxLength: 3 }), (valid, mutations) => {
        const step = mutate(structuredClone(valid), mutations);
        const checked = checkedStep(step as StepCommit);
        const parsed = stepSchema.safeParse(step);
        if (checked !== undefined) {
          seen.vouched += 1;
          expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
          expect(checked).toEqual(parsed.data);
        } else if (!parsed.success) {
          seen.refusedByBoth += 1;
        }
      }),
      { numRuns: 3_000 },
    );
    // Both sides of the agreement were exercised.
    expect(seen.vouched).toBeGreaterThan(100);
    expect(seen.refusedByBoth).toBeGreaterThan(1_000);
  });

  it('leaves rare parts and defaults to the schema, which still takes them', () => {
    const base = { sessionId: 's1', leaseToken: 1 };
    const rare: Record<string, unknown>[] = [
      { messages: [{ inputSeq: 1, round: 0, message: { role: 'user', content: 'hi' } }] },
      { steer: { seqs: [2], intoInputSeq: 1 } },
      { messages: [{ inputSeq: 1, round: 0, kind: 'compact_note', message: { role: 'user', content: 'n' } }], compaction: { foldSeqs: [1], record: { fromSeq: 1, toSeq: 1, estimatedTokensBefore: 9, estimatedTokensAfter: 1, model: null } } },
      {
        pending: {
          assistantSeq: 1, round: 0, inputSeq: 1, toolCalls: [{ id: 'c1', name: 'ask', arguments: '{}' }], unresolvedIds: ['c1'],
          interactions: [{ interactionId: 'i1', toolCallId: 'c1', toolName: 'ask', prompt: 'ok?', options: null, metadata: { a: 1 } }],
        },
      },
    ];
    for (const step of rare) {
      expect(checkedStep({ ...base, ...step } as StepCommit)).toBeUndefined();
      expect(validateStep({ ...base, ...step } as StepCommit)).toEqual(stepSchema.parse({ ...base, ...step }));
    }
    expect(validateStep({ ...base, messages: [{ inputSeq: 1, round: 0, message: { role: 'user', content: 'hi' } }] } as StepCommit).messages[0]!.kind).toBe('message');
  });

  it('refuses a broken step with input.invalid, naming what is wrong', () => {
    const step = { sessionId: 's1', leaseToken: 1, messages: [], toolCalls: [{ toolCallId: '', inputSeq: 1, round: 0, name: 'x', args: {}, status: 'started' }] };
    expect(() => validateStep(step as StepCommit)).toThrow(expect.objectContaining({ code: 'input.invalid', message: expect.stringContaining('toolCalls.0.toolCallId') }));
  });

  it("takes the fast path for every step of the loop's common inputs (a tool round, then a streamed answer)", async () => {
    const store = new StepRecordingStore();
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }, { chunks: ['do', 'ne'] }, { text: 'again' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool], store });
    await harness.send('go');
    await harness.send('more');
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'done' });
    expect(await harness.runNext()).toMatchObject({ status: 'completed', finalText: 'again' });
    expect(store.steps.length).toBeGreaterThanOrEqual(4);
    for (const step of store.steps) expect(checkedStep(step)).toEqual(stepSchema.parse(step));
  });
});
