import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INTERRUPTED_TOOL_RESULT,
  protocolViolations,
  sanitizeHistory,
  type Repair,
} from '../../../../src/core/history/index.js';
import type { Message, ToolMessage } from '../../../../src/core/messages.js';
import { assistant, result, shape, system, user } from './builders.js';

function kinds(repairs: readonly Repair[]): string[] {
  return repairs.map((repair) => repair.kind);
}

describe('sanitizeHistory', () => {
  it('is a no-op on a healthy history: same contents, same objects, no repairs', () => {
    const messages: Message[] = [system(), user(), assistant('x', 'y'), result('x'), result('y'), assistant(), user(), assistant('z')];
    const { messages: out, repairs } = sanitizeHistory(messages);
    expect(repairs).toEqual([]);
    expect(out).toHaveLength(messages.length);
    out.forEach((message, index) => expect(message).toBe(messages[index]));
  });

  it('never mutates its input', () => {
    const messages: Message[] = [result('o'), user(), assistant('x', 'x'), result('x'), user(), assistant('y'), result('y'), result('y')];
    const before = structuredClone(messages);
    sanitizeHistory(messages);
    expect(messages).toEqual(before);
  });

  const table: [string, Message[], string[], string[]][] = [
    ['drops an orphan result at the start', [result('o'), user(), assistant()], ['u', 'a'], ['orphan_result_dropped']],
    ['drops an orphan result mid-history', [user(), assistant('x'), result('x'), result('o'), user()], ['u', 'a(x)', 't(x)', 'u'], ['orphan_result_dropped']],
    [
      'inserts a placeholder for a mid-history unanswered call',
      [user(), assistant('x'), user()],
      ['u', 'a(x)', 't(x)', 'u'],
      ['placeholder_inserted'],
    ],
    [
      'puts placeholders after the existing results, before the next message',
      [user(), assistant('x', 'y', 'z'), result('x'), result('z'), user()],
      ['u', 'a(x,y,z)', 't(x)', 't(y)', 't(z)', 'u'],
      ['placeholder_inserted'],
    ],
    [
      'reorders results to call order',
      [user(), assistant('x', 'y', 'z'), result('z'), result('x'), result('y'), user()],
      ['u', 'a(x,y,z)', 't(x)', 't(y)', 't(z)', 'u'],
      ['results_reordered'],
    ],
    [
      'keeps the first of duplicate results',
      [user(), assistant('x'), result('x', 'first'), result('x', 'second'), user()],
      ['u', 'a(x)', 't(x)', 'u'],
      ['duplicate_result_dropped'],
    ],
    ['leaves a trailing unanswered call untouched', [user(), assistant('x', 'y')], ['u', 'a(x,y)'], []],
    [
      'leaves a partly answered trailing call without placeholders',
      [user(), assistant('x', 'y', 'z'), result('z'), result('x')],
      ['u', 'a(x,y,z)', 't(x)', 't(z)'],
      ['results_reordered'],
    ],
    [
      'moves a result found after a later message back to its call',
      [user(), assistant('x'), user('steer'), result('x'), assistant()],
      ['u', 'a(x)', 't(x)', 'u', 'a'],
      ['result_moved'],
    ],
    [
      'moves a result written before its call (an out-of-band row) after it',
      [user(), result('x'), assistant('x'), user()],
      ['u', 'a(x)', 't(x)', 'u'],
      ['result_moved'],
    ],
    [
      'renames a call id repeated by a later assistant, with the results that sit with it',
      [user(), assistant('x'), result('x'), user(), assistant('x'), result('x'), user()],
      ['u', 'a(x)', 't(x)', 'u', 'a(x_2)', 't(x_2)', 'u'],
      ['call_id_renamed'],
    ],
    [
      'renames an empty call id',
      [user(), assistant(''), user()],
      ['u', 'a(call_2)', 't(call_2)', 'u'],
      ['call_id_renamed', 'placeholder_inserted'],
    ],
  ];
  it.each(table)('%s', (_name, input, expectedShape, expectedRepairs) => {
    const { messages, repairs } = sanitizeHistory(input);
    expect(shape(messages)).toEqual(expectedShape);
    expect(kinds(repairs).sort()).toEqual([...expectedRepairs].sort());
    expect(protocolViolations(messages, { allowTrailingPending: true })).toEqual([]);
  });

  it('writes the placeholder as an error result naming the call', () => {
    const { messages, repairs } = sanitizeHistory([user(), assistant('x'), user()]);
    expect(messages[2]).toEqual({ role: 'tool', toolCallId: 'x', name: 'tool_x', content: INTERRUPTED_TOOL_RESULT, isError: true });
    expect(repairs).toEqual([{ kind: 'placeholder_inserted', assistantIndex: 1, toolCallId: 'x' }]);
  });

  it('keeps the first duplicate result, not the later one', () => {
    const { messages } = sanitizeHistory([user(), assistant('x'), result('x', 'first'), result('x', 'second'), user()]);
    expect((messages[2] as ToolMessage).content).toBe('first');
  });

  it('prefers the result sitting with its call over a stray copy elsewhere', () => {
    const { messages, repairs } = sanitizeHistory([result('x', 'stray'), user(), assistant('x'), result('x', 'own'), user()]);
    expect((messages[2] as ToolMessage).content).toBe('own');
    expect(repairs).toEqual([{ kind: 'duplicate_result_dropped', index: 0, toolCallId: 'x' }]);
  });

  it('reports repairs with positions in the input', () => {
    const { repairs } = sanitizeHistory([user(), result('o'), assistant('x'), user()]);
    expect(repairs).toEqual([
      { kind: 'orphan_result_dropped', index: 1, toolCallId: 'o' },
      { kind: 'placeholder_inserted', assistantIndex: 2, toolCallId: 'x' },
    ]);
  });

  it('does not copy untouched messages even when others are repaired', () => {
    const input: Message[] = [user(), assistant('x'), result('x'), result('o'), user()];
    const { messages } = sanitizeHistory(input);
    expect(messages[0]).toBe(input[0]);
    expect(messages[1]).toBe(input[1]);
    expect(messages[2]).toBe(input[2]);
  });
});

/** Random histories built from a small id pool, so missing, duplicate, stray and repeated ids are common. */
const ids = fc.constantFrom('a', 'b', 'c', 'd', 'a_2', '');
const arbitraryMessage: fc.Arbitrary<Message> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(user()) },
  { weight: 1, arbitrary: fc.constant(system()) },
  { weight: 1, arbitrary: fc.constant(assistant()) },
  { weight: 3, arbitrary: fc.array(ids, { minLength: 1, maxLength: 3 }).map((callIds) => assistant(...callIds)) },
  { weight: 4, arbitrary: ids.map((id) => result(id)) },
);
const arbitraryHistory = fc.array(arbitraryMessage, { maxLength: 25 });

describe('sanitizeHistory properties', () => {
  it('always yields a protocol-valid history (trailing pending allowed)', () => {
    fc.assert(
      fc.property(arbitraryHistory, (history) => {
        const { messages } = sanitizeHistory(history);
        expect(protocolViolations(messages, { allowTrailingPending: true })).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent: sanitizing twice equals sanitizing once, with no further repairs', () => {
    fc.assert(
      fc.property(arbitraryHistory, (history) => {
        const once = sanitizeHistory(history).messages;
        const twice = sanitizeHistory(once);
        expect(twice.messages).toEqual(once);
        expect(twice.repairs).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every non-tool message, in order', () => {
    fc.assert(
      fc.property(arbitraryHistory, (history) => {
        const nonTool = (messages: Message[]) => messages.filter((message) => message.role !== 'tool').map((m) => m.content);
        expect(nonTool(sanitizeHistory(history).messages)).toEqual(nonTool(history));
      }),
      { numRuns: 300 },
    );
  });

  it('changes nothing when the history is already valid', () => {
    fc.assert(
      fc.property(arbitraryHistory, (history) => {
        fc.pre(protocolViolations(history, { allowTrailingPending: true }).length === 0);
        const { messages, repairs } = sanitizeHistory(history);
        expect(repairs).toEqual([]);
        expect(messages).toEqual(history);
      }),
      { numRuns: 200 },
    );
  });
});
