import { describe, expect, it } from 'vitest';
import { estimateMessagesTokens } from '../../../../src/core/budget/index.js';
import { planFold, type FoldOptions } from '../../../../src/core/compaction/index.js';
import type { StoredMessage } from '../../../../src/core/messages.js';
import { WindowBuilder, inputsFolded } from './window-builder.js';

/** A budget so small that any window is over the trigger. */
const ALWAYS: FoldOptions = { contextBudgetTokens: 1 };

function inputs(count: number, builder = new WindowBuilder()): WindowBuilder {
  for (let seq = 1; seq <= count; seq += 1) builder.input(seq);
  return builder;
}

function tokens(rows: readonly StoredMessage[]): number {
  return estimateMessagesTokens(rows.map((row) => row.message));
}

describe('planFold: when', () => {
  it('does nothing below budget × triggerRatio', () => {
    const { rows } = inputs(8);
    const total = tokens(rows);
    expect(planFold(rows, { contextBudgetTokens: Math.ceil(total / 0.75) + 1 })).toBeNull();
    expect(planFold(rows, { contextBudgetTokens: total * 2, triggerRatio: 0.6 })).toBeNull();
  });

  it('folds once the estimate reaches budget × triggerRatio', () => {
    const { rows } = inputs(8);
    const total = tokens(rows);
    expect(planFold(rows, { contextBudgetTokens: total / 0.75 })).not.toBeNull();
    expect(planFold(rows, { contextBudgetTokens: total, triggerRatio: 1 })).not.toBeNull();
  });

  it('does nothing when there are no more inputs than it keeps', () => {
    expect(planFold(inputs(4).rows, ALWAYS)).toBeNull();
    expect(planFold(inputs(2).rows, { ...ALWAYS, keepLastInputs: 2 })).toBeNull();
    expect(planFold([], ALWAYS)).toBeNull();
  });

  it.each([
    ['a zero budget', { contextBudgetTokens: 0 }],
    ['a NaN budget', { contextBudgetTokens: Number.NaN }],
    ['a zero trigger ratio', { contextBudgetTokens: 10, triggerRatio: 0 }],
    ['a trigger ratio above 1', { contextBudgetTokens: 10, triggerRatio: 1.5 }],
    ['keeping no input', { contextBudgetTokens: 10, keepLastInputs: 0 }],
    ['a fractional keep', { contextBudgetTokens: 10, keepLastInputs: 1.5 }],
  ])('refuses %s', (_name, options) => {
    expect(() => planFold([], options)).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });
});

describe('planFold: what', () => {
  it('folds the oldest whole inputs and keeps the last keepLastInputs (default 4)', () => {
    const { rows } = inputs(7);
    const plan = planFold(rows, ALWAYS)!;
    const { whole, partial } = inputsFolded(rows, plan.foldSeqs);
    expect(whole.sort()).toEqual([1, 2, 3]);
    expect(partial).toEqual([]);
    const folded = rows.filter((row) => row.inputSeq !== null && row.inputSeq <= 3);
    expect(plan.foldSeqs).toEqual(folded.map((row) => row.seq));
    expect(plan.fromSeq).toBe(folded[0]!.seq);
    expect(plan.toSeq).toBe(folded.at(-1)!.seq);
    expect(plan.messagesToSummarize).toEqual(folded.map((row) => row.message));
  });

  it('honours keepLastInputs', () => {
    const { rows } = inputs(5);
    const plan = planFold(rows, { ...ALWAYS, keepLastInputs: 1 })!;
    expect(inputsFolded(rows, plan.foldSeqs).whole.sort()).toEqual([1, 2, 3, 4]);
  });

  it('reports the estimate before and after the fold (without the note)', () => {
    const { rows } = inputs(6);
    const plan = planFold(rows, ALWAYS)!;
    const folded = new Set(plan.foldSeqs);
    expect(plan.estimatedTokensBefore).toBe(tokens(rows));
    expect(plan.estimatedTokensAfterWithoutNote).toBe(tokens(rows.filter((row) => !folded.has(row.seq))));
  });

  it('never folds system messages, leading or inside the folded inputs', () => {
    const builder = new WindowBuilder().system('policy');
    builder.input(1).system('mid-input notice', 1).input(2);
    for (let seq = 3; seq <= 6; seq += 1) builder.input(seq);
    const plan = planFold(builder.rows, ALWAYS)!;
    const systemSeqs = builder.rows.filter((row) => row.message.role === 'system').map((row) => row.seq);
    expect(plan.foldSeqs.some((seq) => systemSeqs.includes(seq))).toBe(false);
    expect(plan.messagesToSummarize.some((message) => message.role === 'system')).toBe(false);
    expect(inputsFolded(builder.rows, plan.foldSeqs).whole.sort()).toEqual([1, 2]);
  });

  it('folds the active compact note into the new one, first in what is summarised', () => {
    const builder = inputs(2).note('earlier summary');
    for (let seq = 3; seq <= 7; seq += 1) builder.input(seq);
    const noteRow = builder.rows.find((row) => row.kind === 'compact_note')!;
    const plan = planFold(builder.rows, ALWAYS)!;
    expect(plan.foldSeqs).toContain(noteRow.seq);
    expect(plan.messagesToSummarize[0]).toBe(noteRow.message);
    // The audit range covers the folded conversation, not the note appended later.
    const foldedInputRows = builder.rows.filter((row) => row.inputSeq !== null && row.inputSeq <= 3);
    expect(plan.fromSeq).toBe(foldedInputRows[0]!.seq);
    expect(plan.toSeq).toBe(foldedInputRows.at(-1)!.seq);
  });

  it('folds a compact note even when it was stored with the system role', () => {
    const builder = inputs(5);
    builder.add({ role: 'system', content: 'old-style note' }, null, 'compact_note');
    const plan = planFold(builder.rows, ALWAYS)!;
    expect(plan.foldSeqs).toContain(builder.rows.at(-1)!.seq);
  });

  it('ignores rows already compacted', () => {
    const { rows } = inputs(6);
    const compacted = rows.map((row) => (row.inputSeq === 1 ? { ...row, state: 'compacted' as const } : row));
    const plan = planFold(compacted, ALWAYS)!;
    expect(inputsFolded(compacted, plan.foldSeqs).whole.sort()).toEqual([2]);
    expect(plan.foldSeqs.some((seq) => rows.find((row) => row.seq === seq)!.inputSeq === 1)).toBe(false);
  });

  it('keeps a row without an input seq with the input before it', () => {
    const builder = inputs(2);
    builder.add({ role: 'user', content: 'out-of-band' }, null);
    for (let seq = 3; seq <= 6; seq += 1) builder.input(seq);
    const orphanRow = builder.rows.find((row) => row.inputSeq === null)!;
    const plan = planFold(builder.rows, ALWAYS)!;
    expect(plan.foldSeqs).toContain(orphanRow.seq);
    expect(planFold(builder.rows, { ...ALWAYS, keepLastInputs: 5 })!.foldSeqs).not.toContain(orphanRow.seq);
  });

  it('moves the boundary back rather than split a tool call from a result stamped with a later input', () => {
    const builder = inputs(2);
    // Input 3's call is answered by a row stamped with input 4 (a resume): inputs 3 and 4 must go together.
    builder.add({ role: 'user', content: 'q' }, 3);
    builder.add({ role: 'assistant', content: '', toolCalls: [{ id: 'late', name: 'search', arguments: '{}' }] }, 3);
    builder.add({ role: 'tool', toolCallId: 'late', name: 'search', content: 'r' }, 4);
    builder.add({ role: 'assistant', content: 'a' }, 4);
    for (let seq = 5; seq <= 7; seq += 1) builder.input(seq);
    const plan = planFold(builder.rows, ALWAYS)!;
    // Keeping 4 inputs (4..7) would fold input 3 and orphan the result: only inputs 1–2 are folded.
    expect(inputsFolded(builder.rows, plan.foldSeqs).whole.sort()).toEqual([1, 2]);
  });

  it('returns null when every possible boundary would split a pair', () => {
    const builder = new WindowBuilder();
    builder.add({ role: 'user', content: 'q' }, 1);
    builder.add({ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 's', arguments: '{}' }] }, 1);
    builder.add({ role: 'tool', toolCallId: 'c', name: 's', content: 'r' }, 2);
    builder.add({ role: 'assistant', content: 'a' }, 2);
    expect(planFold(builder.rows, { ...ALWAYS, keepLastInputs: 1 })).toBeNull();
  });

  it('is not blocked by a provider that reuses call ids every turn', () => {
    const builder = new WindowBuilder();
    for (let seq = 1; seq <= 6; seq += 1) builder.input(seq, { ids: ['call_0'] });
    const plan = planFold(builder.rows, ALWAYS)!;
    expect(inputsFolded(builder.rows, plan.foldSeqs).whole.sort()).toEqual([1, 2]);
  });
});
