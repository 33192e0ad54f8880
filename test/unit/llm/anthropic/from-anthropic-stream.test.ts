import { describe, expect, it } from 'vitest';
import { LlmBadResponseError } from '../../../../src/core/errors/index.js';
import { AnthropicStreamAccumulator, type AnthropicStreamEvent } from '../../../../src/llm/anthropic/index.js';

type Event = Record<string, unknown> & { type: string };

const start = (usage: Record<string, unknown> = { input_tokens: 12, output_tokens: 1 }, model = 'claude-answered'): Event => ({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage },
});
const blockStart = (index: number, content_block: Record<string, unknown>): Event => ({ type: 'content_block_start', index, content_block });
const delta = (index: number, d: Record<string, unknown>): Event => ({ type: 'content_block_delta', index, delta: d });
const textDelta = (index: number, text: string) => delta(index, { type: 'text_delta', text });
const jsonDelta = (index: number, partial_json: string) => delta(index, { type: 'input_json_delta', partial_json });
const stop = (index: number): Event => ({ type: 'content_block_stop', index });
const messageDelta = (stop_reason: string | null, usage: Record<string, unknown> = { output_tokens: 25 }): Event => ({
  type: 'message_delta',
  delta: { stop_reason, stop_sequence: null },
  usage,
});
const end: Event = { type: 'message_stop' };
const ping: Event = { type: 'ping' };

function run(events: Event[], requestedModel = 'claude-asked') {
  const text: string[] = [];
  const thinking: string[] = [];
  const accumulator = new AnthropicStreamAccumulator({
    requestedModel,
    handlers: { onTextDelta: (t) => text.push(t), onThinkingDelta: (t) => thinking.push(t) },
  });
  for (const event of events) accumulator.push(event as AnthropicStreamEvent);
  return { response: accumulator.finish(), text, thinking };
}

function failure(events: Event[]): LlmBadResponseError {
  try {
    run(events);
  } catch (error) {
    expect(error).toBeInstanceOf(LlmBadResponseError);
    return error as LlmBadResponseError;
  }
  throw new Error('expected the stream to be rejected');
}

describe('AnthropicStreamAccumulator', () => {
  it('assembles plain text, forwarding each delta, with usage, model and stop reason', () => {
    const { response, text } = run([start(), blockStart(0, { type: 'text', text: '' }), ping, textDelta(0, 'Hel'), textDelta(0, ''), textDelta(0, 'lo'), stop(0), messageDelta('end_turn'), end]);
    expect(text).toEqual(['Hel', 'lo']);
    expect(response).toEqual({
      text: 'Hello',
      thinking: '',
      toolCalls: [],
      finishReason: 'stop',
      rawFinishReason: 'end_turn',
      usage: { promptTokens: 12, completionTokens: 25, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 37 },
      model: 'claude-answered',
      provider: 'anthropic',
    });
  });

  it('assembles several tool_use blocks from fragments, by block index', () => {
    const { response, text } = run([
      start(),
      blockStart(0, { type: 'text', text: '' }),
      textDelta(0, 'Let me check.'),
      stop(0),
      blockStart(1, { type: 'tool_use', id: 'toolu_a', name: 'weather', input: {} }),
      jsonDelta(1, ''),
      jsonDelta(1, '{"city": "Pa'),
      jsonDelta(1, 'ris", "unit": "c"}'),
      stop(1),
      blockStart(2, { type: 'tool_use', id: 'toolu_b', name: 'time', input: {} }),
      jsonDelta(2, '{"tz":'),
      jsonDelta(2, '"CET"}'),
      stop(2),
      messageDelta('tool_use'),
      end,
    ]);
    expect(text).toEqual(['Let me check.']);
    expect(response.toolCalls).toEqual([
      { id: 'toolu_a', name: 'weather', arguments: '{"city": "Paris", "unit": "c"}' },
      { id: 'toolu_b', name: 'time', arguments: '{"tz":"CET"}' },
    ]);
    expect(response).toMatchObject({ text: 'Let me check.', finishReason: 'tool_calls', rawFinishReason: 'tool_use' });
  });

  it('gives a tool_use without input fragments {} (or its start input)', () => {
    const { response } = run([
      start(),
      blockStart(0, { type: 'tool_use', id: 'toolu_a', name: 'now', input: {} }),
      jsonDelta(0, ''),
      stop(0),
      blockStart(1, { type: 'tool_use', id: 'toolu_b', name: 'now', input: { fixed: true } }),
      stop(1),
      messageDelta('tool_use'),
      end,
    ]);
    expect(response.toolCalls.map((call) => call.arguments)).toEqual(['{}', '{"fixed":true}']);
  });

  it('keeps input cut short by max_tokens as is, never repaired', () => {
    const { response } = run([start(), blockStart(0, { type: 'tool_use', id: 'toolu_a', name: 'write', input: {} }), jsonDelta(0, '{"path": "a.txt", "body": "hal'), stop(0), messageDelta('max_tokens'), end]);
    expect(response.toolCalls).toEqual([{ id: 'toolu_a', name: 'write', arguments: '{"path": "a.txt", "body": "hal' }]);
    expect(response.finishReason).toBe('length');
  });

  it('streams thinking separately from text and drops the signature', () => {
    const { response, text, thinking } = run([
      start(),
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      delta(0, { type: 'thinking_delta', thinking: 'Think' }),
      delta(0, { type: 'thinking_delta', thinking: 'ing.' }),
      delta(0, { type: 'signature_delta', signature: 'EqQBCgIYAhIM' }),
      stop(0),
      blockStart(1, { type: 'text', text: '' }),
      textDelta(1, 'Answer'),
      stop(1),
      messageDelta('end_turn', { output_tokens: 40, output_tokens_details: { thinking_tokens: 30 } }),
      end,
    ]);
    expect(thinking).toEqual(['Think', 'ing.']);
    expect(text).toEqual(['Answer']);
    expect(response).toMatchObject({ text: 'Answer', thinking: 'Thinking.', usage: { reasoningTokens: 30, completionTokens: 40 } });
    expect(JSON.stringify(response)).not.toContain('EqQBCgIYAhIM');
  });

  it('reads cache usage from message_start and cumulative figures from message_delta', () => {
    const { response } = run([start({ input_tokens: 5, cache_read_input_tokens: 900, cache_creation_input_tokens: 100, output_tokens: 1 }), messageDelta('end_turn', { output_tokens: 7 }), end]);
    expect(response.usage).toEqual({ promptTokens: 1005, completionTokens: 7, cachedTokens: 900, cacheWriteTokens: 100, reasoningTokens: 0, totalTokens: 1012 });
    expect(response.text).toBe('');
  });

  it('ignores ping, unknown events, unknown blocks and unknown deltas', () => {
    const { response } = run([
      ping,
      start(),
      { type: 'brand_new_event', foo: 1 },
      blockStart(0, { type: 'redacted_thinking', data: 'xx' }),
      delta(0, { type: 'future_delta', x: 1 }),
      stop(0),
      blockStart(1, { type: 'text', text: '' }),
      delta(1, { type: 'citations_delta', citation: {} }),
      textDelta(1, 'ok'),
      stop(1),
      messageDelta('end_turn'),
      end,
      ping,
    ]);
    expect(response.text).toBe('ok');
  });

  it('reports the requested model when message_start names none', () => {
    expect(run([start(undefined, ''), messageDelta('end_turn'), end], 'claude-asked').response.model).toBe('claude-asked');
  });

  it('reports an unknown stop reason as other, keeping it raw', () => {
    expect(run([start(), messageDelta('new_reason'), end]).response).toMatchObject({ finishReason: 'other', rawFinishReason: 'new_reason' });
  });

  const malformed: [string, Event[], RegExp][] = [
    ['no message_stop', [start(), blockStart(0, { type: 'text', text: '' }), textDelta(0, 'cut')], /ended before message_stop/],
    ['nothing at all', [], /ended before message_stop/],
    ['a delta before message_start', [textDelta(0, 'x')], /before message_start/],
    ['a second message_start', [start(), start()], /second message_start/],
    ['a delta for a block that never started', [start(), textDelta(3, 'x')], /block 3, which never started/],
    ['a delta after its block stopped', [start(), blockStart(0, { type: 'text', text: '' }), stop(0), textDelta(0, 'x')], /which already stopped/],
    ['a block started twice', [start(), blockStart(0, { type: 'text', text: '' }), blockStart(0, { type: 'text', text: '' })], /already started/],
    ['text on a tool block', [start(), blockStart(0, { type: 'tool_use', id: 't', name: 'n', input: {} }), textDelta(0, 'x')], /text_delta on a tool_use block/],
    ['json on a text block', [start(), blockStart(0, { type: 'text', text: '' }), jsonDelta(0, '{')], /input_json_delta on a text block/],
    ['a text delta without text', [start(), blockStart(0, { type: 'text', text: '' }), delta(0, { type: 'text_delta' })], /without its string payload/],
    ['a tool_use without a name', [start(), blockStart(0, { type: 'tool_use', id: 't', input: {} })], /without id or name/],
    ['a bad index', [start(), { type: 'content_block_stop', index: -1 }], /valid block index/],
    ['events after message_stop', [start(), messageDelta('end_turn'), end, messageDelta('end_turn')], /after message_stop/],
    ['message_start without a message', [{ type: 'message_start' }], /without a message/],
  ];
  it.each(malformed)('rejects %s with llm.bad_response', (_name, events, message) => {
    const error = failure(events);
    expect(error.message).toMatch(message);
    expect(error.code).toBe('llm.bad_response');
    expect(error.retryable).toBe(true);
  });

  it('rejects an event that is JSON null mid-stream with llm.bad_response, not a TypeError', () => {
    const accumulator = new AnthropicStreamAccumulator({ requestedModel: 'm' });
    accumulator.push(start());
    accumulator.push(blockStart(0, { type: 'text', text: '' }));
    const push = () => accumulator.push(null);
    expect(push).toThrow(LlmBadResponseError);
    expect(push).toThrow(/malformed Anthropic stream: an event is null, not a JSON object/);
  });

  it('works without handlers', () => {
    const accumulator = new AnthropicStreamAccumulator({ requestedModel: 'm' });
    for (const event of [start(), blockStart(0, { type: 'text', text: '' }), textDelta(0, 'x'), stop(0), messageDelta('end_turn'), end]) {
      accumulator.push(event as AnthropicStreamEvent);
    }
    expect(accumulator.complete).toBe(true);
    expect(accumulator.finish().text).toBe('x');
  });
});
