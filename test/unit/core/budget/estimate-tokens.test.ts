import { describe, expect, it } from 'vitest';
import {
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  estimateMessageTokens,
  estimateMessagesTokens,
  estimateTextTokens,
} from '../../../../src/core/budget/index.js';
import type { Message } from '../../../../src/core/messages.js';

describe('estimateTextTokens', () => {
  it.each([
    ['', 0],
    ['a', 1],
    ['abcd', 1],
    ['abcde', 2],
    ['x'.repeat(400), 100],
  ])('%j is %i tokens (about 4 chars each, rounded up)', (text, tokens) => {
    expect(estimateTextTokens(text)).toBe(tokens);
  });
});

describe('estimateMessageTokens', () => {
  const toolCalls = [{ id: 'call_1', name: 'search', arguments: '{"q":"x"}' }];
  const cases: [string, Message, number][] = [
    ['an empty user message', { role: 'user', content: '' }, MESSAGE_OVERHEAD_TOKENS],
    ['a user message', { role: 'user', content: 'x'.repeat(40) }, 4 + 10],
    ['a named user message (name counted)', { role: 'user', content: 'x'.repeat(40), name: 'abcd' }, 4 + 11],
    ['a system message', { role: 'system', content: 'x'.repeat(8) }, 4 + 2],
    [
      'an assistant with tool calls (their JSON counted)',
      { role: 'assistant', content: 'ok', toolCalls },
      4 + Math.ceil((2 + JSON.stringify(toolCalls).length) / 4),
    ],
    ['an assistant with an empty toolCalls array', { role: 'assistant', content: 'ok', toolCalls: [] }, 4 + 1],
    [
      'a tool result (name and call id counted)',
      { role: 'tool', content: 'x'.repeat(20), toolCallId: 'call_1', name: 'search' },
      4 + Math.ceil((20 + 6 + 6) / 4),
    ],
    [
      'text parts',
      { role: 'user', content: [{ type: 'text', text: 'abcd' }, { type: 'text', text: 'efgh' }] },
      4 + 2,
    ],
    [
      'an image, whatever its URL length',
      { role: 'user', content: [{ type: 'image', url: `data:image/png;base64,${'A'.repeat(100_000)}` }] },
      4 + IMAGE_TOKENS,
    ],
    [
      'text and two images',
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x'.repeat(8) },
          { type: 'image', url: 'https://example.com/a.png' },
          { type: 'image', url: 'https://example.com/b.png', mediaType: 'image/png' },
        ],
      },
      4 + 2 + 2 * IMAGE_TOKENS,
    ],
  ];
  it.each(cases)('counts %s', (_name, message, tokens) => {
    expect(estimateMessageTokens(message)).toBe(tokens);
  });
});

describe('estimateMessagesTokens', () => {
  it('sums the messages', () => {
    const messages: Message[] = [
      { role: 'user', content: 'x'.repeat(40) },
      { role: 'assistant', content: 'y'.repeat(4) },
    ];
    expect(estimateMessagesTokens(messages)).toBe(14 + 5);
    expect(estimateMessagesTokens([])).toBe(0);
  });
});
