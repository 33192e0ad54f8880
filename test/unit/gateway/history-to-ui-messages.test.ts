import { validateUIMessages } from 'ai';
import { describe, expect, it } from 'vitest';
import type { Message, StoredMessage } from '../../../src/core/messages.js';
import type { InputRecord, InputStatus } from '../../../src/core/session-types.js';
import { historyToUiMessages } from '../../../src/gateway/chat/history-to-ui-messages.js';

const at = new Date('2026-01-01T00:00:00Z');

function input(seq: number, status: InputStatus, payload: Record<string, unknown>, kind: InputRecord['kind'] = 'send'): InputRecord {
  return {
    sessionId: 's1', seq, inputId: `u${seq}`, kind, mode: 'queue', payload, status, attempts: 1, steeredInto: null,
    result: null, awaiting: null, errorCode: null, errorMessage: null, originJobId: null, acceptedAt: at, startedAt: at, finishedAt: null,
  };
}

let nextSeq = 1;
function stored(inputSeq: number, round: number | null, message: Message): StoredMessage {
  return { seq: nextSeq++, inputSeq, round, kind: 'message', state: 'active', message, createdAt: at };
}

describe('historyToUiMessages', () => {
  it('gives a user message per input and one assistant message per finished input', async () => {
    const messages = [
      stored(1, 0, { role: 'user', content: 'find x' }),
      stored(1, 0, { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }, { id: 'c2', name: 'fetch', arguments: 'not json' }] }),
      stored(1, 0, { role: 'tool', content: 'found', toolCallId: 'c1', name: 'lookup' }),
      stored(1, 0, { role: 'tool', content: [{ type: 'text', text: 'boom' }], toolCallId: 'c2', name: 'fetch', isError: true }),
      stored(1, 1, { role: 'assistant', content: 'Hello' }),
      stored(2, 0, { role: 'user', content: 'more' }),
    ];
    const inputs = [
      input(2, 'running', { input: [{ type: 'text', text: 'more' }] }),
      input(1, 'done', { input: { role: 'user', content: 'find x' } }),
      input(3, 'pending', { submit: { interactionId: 'i', value: 1 } }, 'resume'),
    ];
    const ui = historyToUiMessages('s1', messages, inputs);
    expect(ui).toEqual([
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'find x', state: 'done' }] },
      {
        id: 's1:1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'tool-lookup', toolCallId: 'c1', state: 'output-available', input: { q: 'x' }, output: 'found' },
          { type: 'tool-fetch', toolCallId: 'c2', state: 'output-error', input: 'not json', errorText: 'boom' },
          { type: 'step-start' },
          { type: 'text', text: 'Hello', state: 'done' },
        ],
      },
      { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'more', state: 'done' }] },
    ]);
    // The SDK accepts them as they are.
    await expect(validateUIMessages({ messages: ui })).resolves.toHaveLength(3);
  });

  it('leaves out an assistant message with nothing in it and a tool call without its result stays input-available', () => {
    const messages = [stored(1, 0, { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'ask', arguments: '{}' }] })];
    const ui = historyToUiMessages('s1', messages, [input(1, 'failed', { input: 'hi' }), input(2, 'done', { input: 'again' })]);
    expect(ui.map((m) => m.id)).toEqual(['u1', 's1:1', 'u2']);
    expect(ui[1]!.parts[1]).toEqual({ type: 'tool-ask', toolCallId: 'c1', state: 'input-available', input: {} });
  });
});
