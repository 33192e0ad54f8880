import { describe, expect, it } from 'vitest';
import { LlmBadResponseError } from '../../../../src/core/errors/index.js';
import { classifyLlmError } from '../../../../src/core/retry/index.js';
import { readStreamEvent } from '../../../../src/llm/anthropic/index.js';

function rejection(value: unknown): LlmBadResponseError {
  try {
    readStreamEvent(value);
  } catch (error) {
    expect(error).toBeInstanceOf(LlmBadResponseError);
    return error as LlmBadResponseError;
  }
  throw new Error('expected the event to be rejected');
}

describe('readStreamEvent', () => {
  it('reduces each event type the accumulator reads to its fields', () => {
    const usage = { input_tokens: 3, output_tokens: 1 };
    expect(readStreamEvent({ type: 'message_start', message: { model: 'claude-x', stop_reason: null, usage } })).toEqual({
      type: 'message_start',
      model: 'claude-x',
      stopReason: null,
      usage,
    });
    expect(readStreamEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } })).toEqual({
      type: 'content_block_start',
      index: 0,
      block: { type: 'text', text: 'Hi' },
    });
    expect(readStreamEvent({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't', name: 'n', input: {} } })).toEqual({
      type: 'content_block_start',
      index: 1,
      block: { type: 'tool_use', id: 't', name: 'n', input: {} },
    });
    expect(readStreamEvent({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } })).toEqual({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', payload: '{"a"' },
    });
    expect(readStreamEvent({ type: 'content_block_stop', index: 1 })).toEqual({ type: 'content_block_stop', index: 1 });
    expect(readStreamEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } })).toEqual({
      type: 'message_delta',
      stopReason: 'end_turn',
      usage: { output_tokens: 9 },
    });
    expect(readStreamEvent({ type: 'message_stop' })).toEqual({ type: 'message_stop' });
  });

  it('tolerates missing or odd optional extras and unknown types', () => {
    expect(readStreamEvent({ type: 'ping' })).toEqual({ type: 'ignored', name: 'ping' });
    expect(readStreamEvent({ type: 'brand_new_event', foo: 1 })).toEqual({ type: 'ignored', name: 'brand_new_event' });
    expect(readStreamEvent({ type: 'message_start', message: { model: 7, usage: 'lots' } })).toEqual({ type: 'message_start', model: null, stopReason: null, usage: null });
    expect(readStreamEvent({ type: 'message_delta' })).toEqual({ type: 'message_delta', stopReason: null, usage: null });
    expect(readStreamEvent({ type: 'content_block_start', index: 0, content_block: { type: 'thinking' } })).toMatchObject({ block: { type: 'thinking', thinking: '' } });
    expect(readStreamEvent({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'x' } })).toMatchObject({ block: { type: 'other' } });
    expect(readStreamEvent({ type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } })).toMatchObject({ delta: { type: 'other' } });
  });

  const notEvents: [string, unknown, RegExp][] = [
    ['null', null, /an event is null, not a JSON object/],
    ['a number', 42, /an event is a number, not a JSON object/],
    ['a string', 'content_block_delta', /an event is a string, not a JSON object/],
    ['an array', [{ type: 'message_stop' }], /an event is an array, not a JSON object/],
    ['an object without a type', { index: 0 }, /an event without a string type/],
    ['an object with a non-string type', { type: 5 }, /an event without a string type/],
  ];
  it.each(notEvents)('rejects %s as llm.bad_response', (_name, value, message) => {
    const error = rejection(value);
    expect(error.message).toMatch(message);
    expect(error.details).toEqual({ provider: 'anthropic' });
    expect(classifyLlmError(error)).toEqual({ retryable: true, reason: 'typed', status: null });
  });

  const broken: [string, Record<string, unknown>, RegExp][] = [
    ['message_start', { type: 'message_start', message: null }, /message_start without a message/],
    ['message_start', { type: 'message_start', message: { stop_reason: 1 } }, /message_start whose stop_reason is not a string/],
    ['content_block_start', { type: 'content_block_start', content_block: { type: 'text' } }, /content_block_start without a valid block index/],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: null }, /content_block_start without a content_block/],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { text: '' } }, /content_block_start without a content_block/],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 5 } }, /content_block_start of a text block whose text is not a string/],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't' } }, /content_block_start of a tool_use block without id or name/],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: null }, /content_block_delta without a delta/],
    ['content_block_delta', { type: 'content_block_delta', index: 0 }, /content_block_delta without a delta/],
    ['content_block_delta', { type: 'content_block_delta', index: 1.5, delta: { type: 'text_delta', text: 'x' } }, /content_block_delta without a valid block index/],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: null } }, /content_block_delta \(text_delta\) without its string payload/],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: {} } }, /content_block_delta \(input_json_delta\) without its string payload/],
    ['content_block_stop', { type: 'content_block_stop', index: '0' }, /content_block_stop without a valid block index/],
    ['message_delta', { type: 'message_delta', delta: 'end_turn' }, /message_delta whose delta is not an object/],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: ['end_turn'] } }, /message_delta whose stop_reason is not a string/],
  ];
  it.each(broken)('rejects a %s without the fields it needs, naming the event type', (eventType, value, message) => {
    const error = rejection(value);
    expect(error.message).toMatch(/^malformed Anthropic stream: /);
    expect(error.message).toMatch(message);
    expect(error.code).toBe('llm.bad_response');
    expect(error.details).toMatchObject({ provider: 'anthropic', eventType });
  });
});
