import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { compactNoteMessage } from '../../../../src/core/compaction/compact-note.js';
import { INTERRUPTED_TOOL_RESULT, protocolViolations, sanitizeHistory } from '../../../../src/core/history/index.js';
import { TRUNCATION_NOTICE } from '../../../../src/core/loop/run-round.js';
import type { Message } from '../../../../src/core/messages.js';
import { TOOL_IMAGE_PLACEHOLDER, toOpenAiMessages } from '../../../../src/llm/openai/to-openai-messages.js';
import { openAiMessageViolations } from './openai-message-rules.js';

const call = (id: string, name = 'read_file', args = '{"path":"a.txt"}') => ({ id, name, arguments: args });
const result = (id: string, content: string, isError?: boolean): Message =>
  isError === undefined ? { role: 'tool', toolCallId: id, name: 'read_file', content } : { role: 'tool', toolCallId: id, name: 'read_file', content, isError };

/** Histories of the shapes the loop produces; each converts message for message. */
const histories: [string, Message[]][] = [
  ['plain exchange', [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]],
  [
    'a multi-call round then an answer',
    [
      { role: 'user', content: 'read two files' },
      { role: 'assistant', content: 'Reading both.', toolCalls: [call('c1'), call('c2', 'read_file', '{"path":"b.txt"}')] },
      result('c1', 'A'),
      result('c2', 'B'),
      { role: 'assistant', content: 'done' },
    ],
  ],
  [
    'aborted and synthetic results',
    [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [call('c1'), call('c2'), call('c3', 'ask_user', '{}')] },
      result('c1', 'file body'),
      result('c2', '[skipped: the run was cancelled before this call ran]', true),
      result('c3', INTERRUPTED_TOOL_RESULT, true),
      { role: 'user', content: 'try again' },
    ],
  ],
  [
    'after a compaction note',
    [compactNoteMessage('The user asked for a report; two files were read.'), { role: 'user', content: 'continue' }, { role: 'assistant', content: 'ok' }],
  ],
  [
    'a truncation notice after all tool results',
    [
      { role: 'user', content: 'write it' },
      { role: 'assistant', content: 'Writing', toolCalls: [call('c1', 'write_file', '{"path":"x","text":"…"}')] },
      result('c1', 'tool.invalid_args: arguments are not valid JSON', true),
      { role: 'user', content: TRUNCATION_NOTICE },
    ],
  ],
  [
    'a steering follow-up after a tool round',
    [
      { role: 'user', content: 'start' },
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
      result('c1', 'A'),
      { role: 'user', content: '<follow_up>\nalso check b.txt\n</follow_up>' },
      { role: 'assistant', content: 'Will do.' },
    ],
  ],
  [
    'a multimodal user message',
    [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
          { type: 'image', url: 'https://example.com/cat.jpg' },
        ],
      },
      { role: 'assistant', content: 'A cat.' },
    ],
  ],
  ['empty assistant text with tool calls', [{ role: 'user', content: 'x' }, { role: 'assistant', content: '', toolCalls: [call('c1')] }, result('c1', 'ok')]],
  [
    'a round-limit wrap-up after tool results',
    [
      { role: 'user', content: 'loop' },
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
      result('c1', 'ok'),
      { role: 'user', content: '[notice] The round limit was reached; answer now without tools.' },
      { role: 'assistant', content: 'Summary.' },
    ],
  ],
];

describe('toOpenAiMessages: loop histories', () => {
  it.each(histories)('%s: is valid for the loop and for the Chat Completions API', (_name, history) => {
    expect(protocolViolations(history)).toEqual([]);
    const converted = toOpenAiMessages('You are helpful.', history);
    expect(converted).toHaveLength(history.length + 1);
    expect(converted[0]).toEqual({ role: 'system', content: 'You are helpful.' });
    expect(openAiMessageViolations(converted)).toEqual([]);
  });

  it('a sanitized damaged history converts to a valid request too', () => {
    const damaged: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [call('c1'), call('c2')] },
      result('c2', 'second first'),
      { role: 'user', content: 'hello?' },
      result('orphan', 'nobody asked'),
    ];
    const { messages } = sanitizeHistory(damaged);
    expect(openAiMessageViolations(toOpenAiMessages(null, messages))).toEqual([]);
  });
});

describe('toOpenAiMessages: shapes', () => {
  const cases: [string, Message, ChatCompletionMessageParam][] = [
    ['user text', { role: 'user', content: 'hi' }, { role: 'user', content: 'hi' }],
    ['user with a name', { role: 'user', content: 'hi', name: 'alice' }, { role: 'user', content: 'hi', name: 'alice' }],
    [
      'user parts',
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', url: 'https://x/y.png', mediaType: 'image/png' }] },
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    ],
    ['assistant text', { role: 'assistant', content: 'ok' }, { role: 'assistant', content: 'ok' }],
    ['assistant text from parts', { role: 'assistant', content: [{ type: 'text', text: 'o' }, { type: 'text', text: 'k' }] }, { role: 'assistant', content: 'ok' }],
    [
      'assistant with tool calls and no text → content null',
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }] },
    ],
    [
      'assistant with text and tool calls keeps the text',
      { role: 'assistant', content: 'Reading', toolCalls: [call('c1', 'ls', '')] },
      { role: 'assistant', content: 'Reading', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '' } }] },
    ],
    ['tool result', result('c1', 'A'), { role: 'tool', tool_call_id: 'c1', content: 'A' }],
    ['failed tool result is plain content', result('c1', 'tool.failed: boom', true), { role: 'tool', tool_call_id: 'c1', content: 'tool.failed: boom' }],
    [
      'tool result with an image part',
      { role: 'tool', toolCallId: 'c1', name: 'shot', content: [{ type: 'text', text: 'screenshot: ' }, { type: 'image', url: 'data:image/png;base64,AAAA' }] },
      { role: 'tool', tool_call_id: 'c1', content: `screenshot: ${TOOL_IMAGE_PLACEHOLDER}` },
    ],
    ['system message in the history', { role: 'system', content: 'be brief' }, { role: 'system', content: 'be brief' }],
    ['compact note stays a user message', compactNoteMessage('sum'), { role: 'user', content: '<compact_note>\nsum\n</compact_note>' }],
  ];

  it.each(cases)('%s', (_name, message, expected) => {
    expect(toOpenAiMessages(null, [message])).toEqual([expected]);
  });

  it('puts the system prompt first, and leaves it out when null or empty', () => {
    const history: Message[] = [{ role: 'user', content: 'hi' }];
    expect(toOpenAiMessages('sys', history)[0]).toEqual({ role: 'system', content: 'sys' });
    expect(toOpenAiMessages(null, history)).toEqual([{ role: 'user', content: 'hi' }]);
    expect(toOpenAiMessages('', history)).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('does not mutate the history', () => {
    const history: Message[] = [{ role: 'assistant', content: '', toolCalls: [call('c1')] }, result('c1', 'A')];
    const copy = structuredClone(history);
    toOpenAiMessages('s', history);
    expect(history).toEqual(copy);
  });
});

describe('toOpenAiMessages: user names in the alphabet OpenAI accepts (^[a-zA-Z0-9_-]{1,64}$)', () => {
  const names: [string, string, string | undefined][] = [
    ['kept as it is', 'alice_B-2', 'alice_B-2'],
    ['a space becomes _', 'Jane Doe', 'Jane_Doe'],
    ['every other character too, one _ per code point', 'José (ops) 👍', 'Jos___ops___'],
    ['cut to 64', 'x'.repeat(70), 'x'.repeat(64)],
    ['left out when none of its own characters is left', '李雷', undefined],
    ['left out when empty', '', undefined],
  ];
  it.each(names)('%s', (_case, name, expected) => {
    const [sent] = toOpenAiMessages(null, [{ role: 'user', content: 'hi', name }]);
    expect(sent).toEqual(expected === undefined ? { role: 'user', content: 'hi' } : { role: 'user', content: 'hi', name: expected });
    expect(openAiMessageViolations([sent!])).toEqual([]);
  });
});

describe('openAiMessageViolations (the checker the cases above rely on)', () => {
  it('catches what the API rejects', () => {
    expect(openAiMessageViolations([{ role: 'user', content: 'hi', name: 'Jane Doe' }])).toHaveLength(1);
    const toolCall = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    expect(openAiMessageViolations([{ role: 'tool', tool_call_id: 'c1', content: 'x' }])).toHaveLength(1);
    expect(openAiMessageViolations([{ role: 'assistant', content: null, tool_calls: [toolCall] }, { role: 'user', content: 'hi' }])).toHaveLength(1);
    expect(openAiMessageViolations([{ role: 'assistant', content: null }])).toHaveLength(1);
    expect(openAiMessageViolations([{ role: 'assistant', content: null, tool_calls: [toolCall] }])).toHaveLength(1);
  });
});
