import { describe, expect, it } from 'vitest';
import { LlmBadResponseError } from '../../../../src/core/errors/index.js';
import { StreamAccumulator } from '../../../../src/llm/openai/stream-accumulator.js';

/** A chunk as OpenAI sends it, with `delta` in choice 0. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null, ...extra };
}
const usageChunk = (usage: Record<string, unknown>) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [], usage });
const tc = (fields: Record<string, unknown>) => ({ tool_calls: [fields] });

function run(chunks: unknown[]) {
  const events: string[] = [];
  const accumulator = new StreamAccumulator({ onTextDelta: (text) => events.push(`text:${text}`), onThinkingDelta: (text) => events.push(`think:${text}`) });
  for (const item of chunks) accumulator.push(item);
  return { response: accumulator.finish(), events };
}

describe('StreamAccumulator: text, thinking, finish', () => {
  it('concatenates text deltas and calls the handler per non-empty delta, in order', () => {
    const { response, events } = run([chunk({ role: 'assistant', content: '', refusal: null }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop')]);
    expect(response).toMatchObject({ text: 'Hello', thinking: '', toolCalls: [], rawFinishReason: 'stop', model: 'gpt-4o-mini-2024-07-18', id: 'chatcmpl-1' });
    expect(events).toEqual(['text:Hel', 'text:lo']);
  });

  it.each(['reasoning_content', 'reasoning'])('reasoning deltas (%s) go to onThinkingDelta, before the text of the same chunk', (field) => {
    const { response, events } = run([chunk({ [field]: 'Let me ', content: null }), chunk({ [field]: 'think.' }), chunk({ [field]: ' Done.', content: 'Answer' }), chunk({}, 'stop')]);
    expect(response.thinking).toBe('Let me think. Done.');
    expect(response.text).toBe('Answer');
    expect(events).toEqual(['think:Let me ', 'think:think.', 'think: Done.', 'text:Answer']);
  });

  it('a refusal is the text of the answer', () => {
    const { response } = run([chunk({ content: null, refusal: "I can't help" }), chunk({ refusal: ' with that.' }), chunk({}, 'stop')]);
    expect(response.text).toBe("I can't help with that.");
  });

  it('keeps the first finish reason; the usage chunk after it still counts', () => {
    const { response } = run([chunk({ content: 'x' }, 'length'), usageChunk({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 })]);
    expect(response.rawFinishReason).toBe('length');
    expect(response.usage).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
  });

  it('reads cached and reasoning tokens from the usage details', () => {
    const { response } = run([
      chunk({ content: 'x' }, 'stop'),
      usageChunk({
        prompt_tokens: 1200,
        completion_tokens: 300,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0 },
      }),
    ]);
    expect(response.usage).toEqual({ promptTokens: 1200, completionTokens: 300, totalTokens: 1500, cachedTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 256 });
  });

  it('usage without details or total, or no usage at all', () => {
    expect(run([chunk({}, 'stop'), usageChunk({ prompt_tokens: 5, completion_tokens: 2 })]).response.usage).toEqual({
      promptTokens: 5,
      completionTokens: 2,
      totalTokens: 7,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
    expect(run([chunk({ content: 'x' }, 'stop')]).response.usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
  });

  it('usage on the finishing chunk itself (some compatible endpoints)', () => {
    const { response } = run([chunk({ content: 'x' }, 'stop', { usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } })]);
    expect(response.usage.totalTokens).toBe(3);
  });

  it('a stream without a finish reason is a bad response, even with text', () => {
    const accumulator = new StreamAccumulator();
    accumulator.push(chunk({ content: 'partial' }));
    expect(accumulator.finished).toBe(false);
    expect(() => accumulator.finish()).toThrow(LlmBadResponseError);
  });

  it('an empty finish_reason (compatible servers send "" before the last chunk) is none yet', () => {
    const truncated = new StreamAccumulator();
    truncated.push(chunk({ content: 'partial' }, ''));
    expect(truncated.finished).toBe(false);
    expect(() => truncated.finish()).toThrow(LlmBadResponseError);
    const { response } = run([chunk({ content: 'cut' }, ''), chunk({}, 'length')]);
    expect(response.rawFinishReason).toBe('length');
  });

  it('ignores choices other than index 0 and fields it does not know', () => {
    const other = { ...chunk({ content: 'x' }), choices: [{ index: 1, delta: { content: 'NO' }, finish_reason: null }] };
    const { response } = run([chunk({ content: 'ok' }, null, { obfuscation: 'zz', service_tier: 'default' }), other, chunk({}, 'stop')]);
    expect(response.text).toBe('ok');
  });
});

describe('StreamAccumulator: tool calls', () => {
  it('assembles one call from an id+name fragment and argument fragments', () => {
    const { response } = run([
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '' } }] }),
      chunk(tc({ index: 0, function: { arguments: '{"pa' } })),
      chunk(tc({ index: 0, function: { arguments: 'th":"a' } })),
      chunk(tc({ index: 0, function: { arguments: '.txt"}' } })),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls).toEqual([{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }]);
    expect(response.rawFinishReason).toBe('tool_calls');
  });

  it('parallel calls with distinct indices, fragments interleaved', () => {
    const { response } = run([
      chunk(tc({ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } })),
      chunk(tc({ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '' } })),
      chunk(tc({ index: 1, function: { arguments: '{"y":' } })),
      chunk(tc({ index: 0, function: { arguments: '{"x":' } })),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }, { index: 1, function: { arguments: '2}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'f', arguments: '{"x":1}' },
      { id: 'call_b', name: 'g', arguments: '{"y":2}' },
    ]);
  });

  it('edge case 7: a new id at an index already used starts a new call', () => {
    const { response } = run([
      chunk(tc({ index: 0, id: 'call_a', function: { name: 'read_file', arguments: '{"path":"a"}' } })),
      chunk(tc({ index: 0, id: 'call_b', function: { name: 'read_file', arguments: '{"path":' } })),
      chunk(tc({ index: 0, function: { arguments: '"b"}' } })),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
      { id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
    ]);
  });

  it('edge case 7: calls with neither id nor index are not merged', () => {
    const { response } = run([
      chunk(tc({ function: { name: 'read_file', arguments: '{"path":"a"}' } })),
      chunk(tc({ function: { name: 'read_file', arguments: '{"path":' } })),
      chunk(tc({ function: { arguments: '"b"}' } })),
      chunk(tc({ function: { name: 'ls', arguments: '{}' } })),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls.map(({ name, arguments: args }) => ({ name, args }))).toEqual([
      { name: 'read_file', args: '{"path":"a"}' },
      { name: 'read_file', args: '{"path":"b"}' },
      { name: 'ls', args: '{}' },
    ]);
    const ids = response.toolCalls.map((call) => call.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => id.startsWith('call_chatcmpl-1'))).toBe(true);
  });

  it('id-less calls reusing index 0: a second complete call is not glued onto the first', () => {
    const { response } = run([
      chunk(tc({ index: 0, function: { name: 'read_file', arguments: '{"path":"a"}' } })),
      chunk(tc({ index: 0, function: { name: 'read_file', arguments: '{"path":"b"}' } })),
      chunk(tc({ index: 0, function: { name: 'write_file', arguments: '{}' } })),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls.map((call) => call.arguments)).toEqual(['{"path":"a"}', '{"path":"b"}', '{}']);
  });

  it('a name repeated while the arguments are still streaming continues the call', () => {
    const { response } = run([
      chunk(tc({ index: 0, id: 'call_a', function: { name: 'f', arguments: '{"x"' } })),
      chunk(tc({ index: 0, function: { name: 'f', arguments: ':1}' } })),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls).toEqual([{ id: 'call_a', name: 'f', arguments: '{"x":1}' }]);
  });

  it('index-less fragments that repeat the id continue that call', () => {
    const { response } = run([
      chunk(tc({ id: 'call_a', function: { name: 'f', arguments: '{"x"' } })),
      chunk(tc({ id: 'call_a', function: { arguments: ':1}' } })),
      chunk(tc({ id: 'call_b', function: { name: 'g', arguments: '{}' } })),
      chunk({}, 'tool_calls'),
    ]);
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'f', arguments: '{"x":1}' },
      { id: 'call_b', name: 'g', arguments: '{}' },
    ]);
  });

  it('truncated arguments are returned as streamed, never repaired (edge case 24)', () => {
    const { response } = run([chunk(tc({ index: 0, id: 'call_a', function: { name: 'write_file', arguments: '{"path":"x","text":"half' } })), chunk({}, 'length')]);
    expect(response.toolCalls).toEqual([{ id: 'call_a', name: 'write_file', arguments: '{"path":"x","text":"half' }]);
    expect(response.rawFinishReason).toBe('length');
  });

  it('text and tool calls in one response', () => {
    const { response, events } = run([chunk({ content: 'Let me look.' }), chunk(tc({ index: 0, id: 'c', function: { name: 'ls', arguments: '{}' } })), chunk({}, 'tool_calls')]);
    expect(response.text).toBe('Let me look.');
    expect(response.toolCalls).toHaveLength(1);
    expect(events).toEqual(['text:Let me look.']);
  });

  it('a call that never got a function name is a bad response', () => {
    expect(() => run([chunk(tc({ index: 0, id: 'c', function: { arguments: '{}' } })), chunk({}, 'tool_calls')])).toThrow(LlmBadResponseError);
  });
});

describe('StreamAccumulator: malformed chunks', () => {
  const bad: [string, unknown][] = [
    ['not an object', 'hello'],
    ['an array', [1, 2]],
    ['choices not an array', { choices: { 0: {} } }],
    ['a choice that is not an object', { choices: [7] }],
    ['delta not an object', { choices: [{ index: 0, delta: 'x' }] }],
    ['content a number', chunk({ content: 42 })],
    ['finish_reason a number', chunk({}, 3 as unknown as string)],
    ['tool_calls an object', chunk({ tool_calls: { index: 0 } })],
    ['tool call index negative', chunk(tc({ index: -1, id: 'c' }))],
    ['tool call index a string', chunk(tc({ index: '0', id: 'c' }))],
    ['tool call id a number', chunk(tc({ index: 0, id: 5 }))],
    ['arguments an object', chunk(tc({ index: 0, id: 'c', function: { name: 'f', arguments: { x: 1 } } }))],
  ];
  it.each(bad)('%s → LlmBadResponseError (retryable)', (_name, value) => {
    const accumulator = new StreamAccumulator();
    let thrown: unknown;
    try {
      accumulator.push(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LlmBadResponseError);
    expect((thrown as LlmBadResponseError).retryable).toBe(true);
    expect((thrown as LlmBadResponseError).code).toBe('llm.bad_response');
  });

  it('tolerates null fields and a missing delta', () => {
    const { response } = run([
      { id: 'x', choices: [{ index: 0, delta: { content: null, tool_calls: null, refusal: null, reasoning_content: null } }] },
      { id: 'x', choices: [{ index: 0, finish_reason: 'stop' }] },
      { id: 'x', choices: null, usage: null },
    ]);
    expect(response.text).toBe('');
    expect(response.rawFinishReason).toBe('stop');
  });

  it('a throwing handler throws out of push', () => {
    const accumulator = new StreamAccumulator({
      onTextDelta: () => {
        throw new Error('listener bug');
      },
    });
    expect(() => accumulator.push(chunk({ content: 'x' }))).toThrow('listener bug');
  });
});
