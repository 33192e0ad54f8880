import { describe, expect, it } from 'vitest';
import type { Message, StoredMessage } from '../../../../src/core/messages.js';
import { previousInputEnd } from '../../../../src/core/loop/build-request.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { deferred, LoopHarness, runChecked } from './loop-harness.js';

const noop = { name: 'noop', description: 'Does nothing', parameters: { type: 'object', properties: {} }, execute: () => 'ok' };

function row(seq: number, inputSeq: number | null, message: Message, state: StoredMessage['state'] = 'active'): StoredMessage {
  return { seq, inputSeq, round: 0, kind: 'message', state, message, createdAt: new Date(0) };
}

describe('the request’s cache breakpoint: where the earlier inputs end', () => {
  it('is null on a session’s first input, then the last message of the input before, on every round of the next', async () => {
    const llm = new ScriptedLlm([{ text: 'one' }, { toolCalls: [{ name: 'noop' }] }, { text: 'two' }]);
    const harness = new LoopHarness({ llm, tools: [noop] });
    await harness.send('first');
    await runChecked(harness);
    await harness.send('second');
    await runChecked(harness);
    expect(llm.requests.map((request) => request.cacheBreakpoint)).toEqual([null, 1, 1]);
    // Index 1 is the first input's reply, in both rounds of the second input.
    expect(llm.requests[1]!.messages[1]).toEqual({ role: 'assistant', content: 'one' });
    expect(llm.requests.map((request) => request.sessionId)).toEqual(['s1', 's1', 's1']);
  });

  it('leaves a steered input’s messages after it: they belong to the running input', async () => {
    const entered = deferred();
    const gate = deferred();
    const llm = new ScriptedLlm([
      { text: 'one' },
      () => {
        entered.resolve();
        return { text: 'working', gate: gate.promise };
      },
      { text: 'both done' },
    ]);
    const harness = new LoopHarness({ llm });
    await harness.send('first');
    await runChecked(harness);
    await harness.send('second');
    const run = runChecked(harness);
    await entered.promise;
    await harness.send('also this', undefined, 'steer');
    gate.resolve();
    await run;
    expect(llm.requests.map((request) => request.cacheBreakpoint)).toEqual([null, 1, 1]);
  });

  it('finds the message by identity, skips folded rows and rows of this input or later, and is null when none is left', () => {
    const a: Message = { role: 'user', content: 'a' };
    const b: Message = { role: 'assistant', content: 'b' };
    const c: Message = { role: 'user', content: 'c' };
    const window = [row(1, 1, a), row(2, 1, b), row(3, 2, c)];
    expect(previousInputEnd(window, [a, b, c], 2)).toBe(1);
    expect(previousInputEnd(window, [a, b, c], 1)).toBeNull();
    // A row written with no input counts as earlier.
    expect(previousInputEnd([row(1, null, a), row(2, 2, c)], [a, c], 2)).toBe(0);
    // A folded row is not sent: the one before it is the end.
    expect(previousInputEnd([row(1, 1, a), row(2, 1, b, 'compacted'), row(3, 2, c)], [a, c], 2)).toBe(0);
    // A message the sanitizer rewrote (a copy) is not found: no breakpoint rather than a wrong one.
    expect(previousInputEnd(window, [a, { ...b }, c], 2)).toBeNull();
  });
});
