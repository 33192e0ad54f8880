import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/core/messages.js';
import { toAnthropicMessages } from '../../../src/llm/anthropic/to-anthropic-messages.js';
import { toOpenAiMessages } from '../../../src/llm/openai/to-openai-messages.js';

/**
 * The store's window cache hands every run of a session the same deep-frozen rows (docs/store.md,
 * "The window cache"): converting a request must never write into the history it is given.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function history(): Message[] {
  return [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: [{ type: 'text', text: 'look at this' }, { type: 'image', url: 'https://example.test/a.png' }], name: 'ann' },
    { role: 'user', content: 'and this' },
    { role: 'assistant', content: 'checking', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"a"}' }, { id: 'c2', name: 'lookup', arguments: '' }] },
    { role: 'tool', toolCallId: 'c1', name: 'lookup', content: 'found a' },
    { role: 'tool', toolCallId: 'c2', name: 'lookup', content: [{ type: 'text', text: 'found b' }], isError: true },
    { role: 'user', content: 'thanks' },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ];
}

describe('provider requests from a frozen history', () => {
  it('OpenAI: converts deep-frozen messages exactly as unfrozen ones', () => {
    expect(toOpenAiMessages('sys', deepFreeze(history()))).toEqual(toOpenAiMessages('sys', history()));
  });

  it.each(['native', 'text'] as const)('Anthropic (%s tool mode): converts deep-frozen messages exactly as unfrozen ones', (mode) => {
    expect(toAnthropicMessages(deepFreeze(history()), { systemPrompt: 'sys', toolBlocks: mode })).toEqual(toAnthropicMessages(history(), { systemPrompt: 'sys', toolBlocks: mode }));
  });
});
