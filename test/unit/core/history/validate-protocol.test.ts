import { describe, expect, it } from 'vitest';
import { assertProtocolValid, protocolViolations } from '../../../../src/core/history/index.js';
import type { Message } from '../../../../src/core/messages.js';
import { assistant, result, system, user } from './builders.js';

describe('protocolViolations', () => {
  const valid: [string, Message[]][] = [
    ['an empty history', []],
    ['plain turns', [system(), user(), assistant(), user(), assistant()]],
    ['one call answered', [user(), assistant('x'), result('x'), assistant()]],
    ['several calls answered in order', [user(), assistant('x', 'y', 'z'), result('x'), result('y'), result('z'), user()]],
    ['consecutive tool rounds', [user(), assistant('x'), result('x'), assistant('y'), result('y'), assistant()]],
    ['an assistant with an empty toolCalls array', [user(), { role: 'assistant', content: 'ok', toolCalls: [] }, user()]],
  ];
  it.each(valid)('accepts %s', (_name, messages) => {
    expect(protocolViolations(messages)).toEqual([]);
  });

  const invalid: [string, Message[], RegExp][] = [
    ['an orphan result at the start', [result('x'), user()], /message 0 \(tool\): orphan result for "x"/],
    ['an orphan result after a user message', [user(), result('x')], /orphan result for "x"/],
    ['a result for a call of another assistant', [assistant('x'), result('x'), assistant('y'), result('x'), result('y')], /message 3 \(tool\): orphan result for "x"/],
    ['a second result for one call', [assistant('x'), result('x'), result('x'), user()], /second result for "x"/],
    ['results out of call order', [assistant('x', 'y'), result('y'), result('x'), user()], /result for "x" is out of call order/],
    ['a user message between a call and its result', [assistant('x'), user(), result('x')], /call\(s\) "x" have no result before message 1 \(user\)/],
    ['a system message between a call and its result', [assistant('x'), system(), result('x')], /before message 1 \(system\)/],
    ['a mid-history unanswered call', [user(), assistant('x', 'y'), result('x'), user()], /message 1 \(assistant\): tool call\(s\) "y" have no result/],
    ['a duplicate call id across assistants', [assistant('x'), result('x'), assistant('x'), result('x')], /message 2 \(assistant\): duplicate tool call id "x"/],
    ['a duplicate call id in one assistant', [assistant('x', 'x'), result('x'), user()], /duplicate tool call id "x"/],
    ['an empty call id', [assistant(''), result(''), user()], /empty id/],
    ['a trailing unanswered call (not allowed by default)', [user(), assistant('x')], /"x" have no result at the end of the history/],
  ];
  it.each(invalid)('reports %s', (_name, messages, pattern) => {
    const violations = protocolViolations(messages);
    expect(violations.length).toBeGreaterThan(0);
    expect(violations.join('\n')).toMatch(pattern);
  });

  it('allows a trailing assistant with unanswered calls when asked to', () => {
    expect(protocolViolations([user(), assistant('x', 'y')], { allowTrailingPending: true })).toEqual([]);
    expect(protocolViolations([user(), assistant('x', 'y'), result('x')], { allowTrailingPending: true })).toEqual([]);
    // Only results still in call order; a gap is a call not answered yet.
    expect(protocolViolations([user(), assistant('x', 'y', 'z'), result('x'), result('z')], { allowTrailingPending: true })).toEqual([]);
  });

  it('still refuses a mid-history unanswered call when trailing pending is allowed', () => {
    const messages = [user(), assistant('x'), user(), assistant('y')];
    expect(protocolViolations(messages, { allowTrailingPending: true })).toHaveLength(1);
  });

  it('still refuses out-of-order results in the trailing block', () => {
    const messages = [user(), assistant('x', 'y'), result('y'), result('x')];
    expect(protocolViolations(messages, { allowTrailingPending: true })).toHaveLength(1);
  });

  it('reports every violation, not only the first', () => {
    const messages = [result('a'), assistant('x'), user(), result('x'), assistant('x')];
    expect(protocolViolations(messages)).toHaveLength(5);
  });
});

describe('assertProtocolValid', () => {
  it('passes a valid history', () => {
    expect(() => assertProtocolValid([user(), assistant('x'), result('x')])).not.toThrow();
  });

  it('throws an internal error listing the violations', () => {
    let thrown: unknown;
    try {
      assertProtocolValid([user(), result('x')]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'internal', details: { violations: [expect.stringMatching(/orphan/)] } });
    expect((thrown as Error).message).toMatch(/orphan result for "x"/);
  });

  it('passes allowTrailingPending through', () => {
    expect(() => assertProtocolValid([user(), assistant('x')], { allowTrailingPending: true })).not.toThrow();
    expect(() => assertProtocolValid([user(), assistant('x')])).toThrow(/no result/);
  });
});
