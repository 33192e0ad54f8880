import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateMessagesTokens } from '../../../../src/core/budget/index.js';
import { applyFold, compactNoteMessage, planFold } from '../../../../src/core/compaction/index.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import type { StoredMessage } from '../../../../src/core/messages.js';
import { WindowBuilder, inputsFolded } from './window-builder.js';

interface InputSpec {
  rounds: number;
  callsPerRound: number;
  textLength: number;
  systemBefore: boolean;
}

interface WindowSpec {
  leadingSystem: boolean;
  inputs: InputSpec[];
  /** Insert an earlier compact note after this many inputs (null: none). */
  noteAfter: number | null;
  /** The last input stops with its calls unanswered (the loop is mid-round). */
  trailingPending: boolean;
  keepLastInputs: number;
  /** Re-stamp some tool results with the next input's seq (a resume answering an earlier call). */
  restampResults: boolean[];
}

const inputSpec = fc.record({
  rounds: fc.integer({ min: 0, max: 3 }),
  callsPerRound: fc.integer({ min: 1, max: 3 }),
  textLength: fc.integer({ min: 0, max: 200 }),
  systemBefore: fc.boolean(),
});

const windowSpec: fc.Arbitrary<WindowSpec> = fc
  .record({
    leadingSystem: fc.boolean(),
    inputs: fc.array(inputSpec, { minLength: 0, maxLength: 10 }),
    noteAt: fc.nat(),
    withNote: fc.boolean(),
    trailingPending: fc.boolean(),
    keepLastInputs: fc.integer({ min: 1, max: 5 }),
    restampResults: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
  })
  .map(({ noteAt, withNote, ...rest }) => ({ ...rest, noteAfter: withNote ? noteAt % (rest.inputs.length + 1) : null }));

function buildWindow(spec: WindowSpec): StoredMessage[] {
  const builder = new WindowBuilder();
  if (spec.leadingSystem) builder.system('policy');
  spec.inputs.forEach((input, index) => {
    if (spec.noteAfter === index) builder.note('earlier summary');
    if (input.systemBefore) builder.system('notice', index + 1);
    const last = index === spec.inputs.length - 1;
    builder.input(index + 1, {
      rounds: last && spec.trailingPending ? Math.max(1, input.rounds) : input.rounds,
      callsPerRound: input.callsPerRound,
      text: 'x'.repeat(input.textLength),
      pending: last && spec.trailingPending,
    });
  });
  if (spec.noteAfter === spec.inputs.length) builder.note('earlier summary');
  return builder.rows;
}

/** Moves the first tool result of some inputs to the next input, as a resume stamping its own seq would. */
function restamp(rows: StoredMessage[], flags: boolean[], inputCount: number): StoredMessage[] {
  const done = new Set<number>();
  return rows.map((row) => {
    const inputSeq = row.inputSeq;
    if (inputSeq === null || row.message.role !== 'tool' || done.has(inputSeq)) return row;
    done.add(inputSeq);
    return flags[inputSeq - 1] === true && inputSeq < inputCount ? { ...row, inputSeq: inputSeq + 1 } : row;
  });
}

describe('planFold properties', () => {
  it('keeps a protocol-valid window, never folds part of an input, and keeps exactly the last inputs', () => {
    fc.assert(
      fc.property(windowSpec, (spec) => {
        const window = buildWindow(spec);
        const plan = planFold(window, { contextBudgetTokens: 1, keepLastInputs: spec.keepLastInputs });
        const inputCount = spec.inputs.length;
        if (plan === null) {
          expect(inputCount).toBeLessThanOrEqual(spec.keepLastInputs);
          return;
        }
        const view = applyFold(window, plan, compactNoteMessage('summary'));
        expect(protocolViolations(view, { allowTrailingPending: spec.trailingPending })).toEqual([]);
        const { whole, partial } = inputsFolded(window, plan.foldSeqs);
        expect(partial).toEqual([]);
        expect(whole.sort((a, b) => a - b)).toEqual(Array.from({ length: inputCount - spec.keepLastInputs }, (_, i) => i + 1));
        // Every active compact note is folded; no system message is.
        for (const row of window) {
          if (row.kind === 'compact_note') expect(plan.foldSeqs).toContain(row.seq);
          else if (row.message.role === 'system') expect(plan.foldSeqs).not.toContain(row.seq);
        }
        const folded = new Set(plan.foldSeqs);
        const kept = window.filter((row) => !folded.has(row.seq)).map((row) => row.message);
        expect(plan.estimatedTokensAfterWithoutNote).toBe(estimateMessagesTokens(kept));
        expect(plan.fromSeq).toBeLessThanOrEqual(plan.toSeq);
      }),
      { numRuns: 400 },
    );
  });

  it('never splits a tool pair, even when results are stamped with a later input', () => {
    fc.assert(
      fc.property(windowSpec, (spec) => {
        const window = restamp(buildWindow(spec), spec.restampResults, spec.inputs.length);
        const plan = planFold(window, { contextBudgetTokens: 1, keepLastInputs: spec.keepLastInputs });
        if (plan === null) return;
        const view = applyFold(window, plan, compactNoteMessage('summary'));
        expect(protocolViolations(view, { allowTrailingPending: spec.trailingPending })).toEqual([]);
        expect(protocolViolations(plan.messagesToSummarize.filter((m) => m.role !== 'user' || !String(m.content).startsWith('<compact_note>')))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
});
