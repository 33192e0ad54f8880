import { describe, expect, it } from 'vitest';
import { dataText, encodeEvent } from '../../../src/events/event-body.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';
import { isMalformed, parseStreamEntry } from '../../../src/events/stream-entry.js';

describe('encodeEvent', () => {
  it('puts type on its own field and the envelope first in data, without the opening brace', () => {
    const encoded = encodeEvent('sess-1', 4, { type: 'round_started', roundIndex: 2 });
    expect(encoded).toEqual({ type: 'round_started', body: '"sessionId":"sess-1","inputSeq":4,"roundIndex":2}' });
    expect(dataText(7, encoded.body)).toBe('{"seq":7,"sessionId":"sess-1","inputSeq":4,"roundIndex":2}');
  });

  it('keeps empty arrays, empty objects, nulls and unicode exactly as JSON.stringify wrote them', () => {
    const event: FleetEvent = { type: 'steer_applied', inputSeqs: [], roundIndex: 0 };
    const tool: FleetEvent = { type: 'tool_call_started', name: 'ü', toolCallId: 'c', toolInput: { list: [], map: {}, none: null, emoji: '🚀' }, attempt: 1 };
    expect(JSON.parse(dataText(1, encodeEvent('s', null, event).body))).toEqual({ seq: 1, sessionId: 's', inputSeq: null, inputSeqs: [], roundIndex: 0 });
    expect(JSON.parse(dataText(2, encodeEvent('s', 1, tool).body)).toolInput).toEqual({ list: [], map: {}, none: null, emoji: '🚀' });
  });

  it('never lets a payload field shadow or duplicate the envelope', () => {
    const hostile = { type: 'agent_error', errorCode: 'x', errorType: 'y', message: 'z', seq: 99, sessionId: 'other', inputSeq: 5 } as unknown as FleetEvent;
    const text = dataText(3, encodeEvent('mine', 1, hostile).body);
    expect(text.match(/"seq"/g)).toHaveLength(1);
    expect(JSON.parse(text)).toMatchObject({ seq: 3, sessionId: 'mine', inputSeq: 1, errorCode: 'x' });
  });

  it('encodes the same whatever the payload key order, and an event with no payload', () => {
    const typeFirst = encodeEvent('s', 2, { type: 'stream_delta', streamId: 'x', text: 'hi' });
    const typeLast = encodeEvent('s', 2, { streamId: 'x', text: 'hi', type: 'stream_delta' } as FleetEvent);
    expect(typeLast).toEqual(typeFirst);
    expect(typeFirst.body).toBe('"sessionId":"s","inputSeq":2,"streamId":"x","text":"hi"}');
    const bare = { type: 'session_ended' } as unknown as FleetEvent;
    expect(encodeEvent('s', null, bare)).toEqual({ type: 'session_ended', body: '"sessionId":"s","inputSeq":null}' });
    expect(encodeEvent('s"\\n', 1, { type: 'round_started', roundIndex: 0 }).body).toBe('"sessionId":"s\\"\\\\n","inputSeq":1,"roundIndex":0}');
  });

  it('drops undefined optional fields', () => {
    const finished = { type: 'input_finished', error: null, status: 'completed', finalText: '', rounds: 1, toolCalls: 0, usage: {}, steeredInto: undefined } as unknown as FleetEvent;
    expect(JSON.parse(dataText(1, encodeEvent('s', 1, finished).body))).not.toHaveProperty('steeredInto');
  });

  it("marks an input_finished with the input it finishes (the script's deduplication key), and nothing else", () => {
    const finished: FleetEvent = { type: 'input_finished', status: 'completed', finalText: '', rounds: 1, toolCalls: 0, usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 1, costUsd: 0, costPicoUsd: 0 }, error: null, steeredInto: 2 };
    expect(encodeEvent('s', 3, finished).finishes).toBe(3);
    expect(encodeEvent('s', 3, { ...finished, steeredInto: undefined } as FleetEvent).finishes).toBe(3);
    expect(encodeEvent('s', null, finished)).not.toHaveProperty('finishes');
    expect(encodeEvent('s', 3, { type: 'input_resumed', reason: 'worker_lost', attempt: 2, agent: { name: 'default', version: 'v1' } })).not.toHaveProperty('finishes');
  });

  it("marks the input_accepted of a session's input 1, and only it, as a session's start", () => {
    const accepted: FleetEvent = { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'i' };
    expect(encodeEvent('s', 1, accepted).firstInput).toBe(true);
    expect(encodeEvent('s', 2, accepted)).not.toHaveProperty('firstInput');
    expect(encodeEvent('s', 1, { type: 'input_resumed', reason: 'worker_lost', attempt: 2, agent: { name: 'default', version: 'v1' } })).not.toHaveProperty('firstInput');
  });

  it('throws on a payload JSON cannot carry', () => {
    const bad = { type: 'tool_call_started', name: 'n', toolCallId: 'c', toolInput: 10n, attempt: 1 } as unknown as FleetEvent;
    expect(() => encodeEvent('s', 1, bad)).toThrow();
  });
});

describe('parseStreamEntry', () => {
  it('parses type and data regardless of field order', () => {
    const data = dataText(5, encodeEvent('s', 2, { type: 'stream_delta', streamId: 'x', text: 'hi' }).body);
    const event = parseStreamEntry('s', ['1-0', ['data', data, 'type', 'stream_delta']]);
    expect(event).toEqual({ kind: 'event', id: '1-0', type: 'stream_delta', data: { seq: 5, sessionId: 's', inputSeq: 2, streamId: 'x', text: 'hi' } });
    expect(isMalformed(event)).toBe(false);
  });

  it.each([
    ['not JSON', 'not json{'],
    ['a JSON array', '[1,2]'],
    ['no seq', '{"sessionId":"s","inputSeq":null}'],
    ['a string seq', '{"seq":"1","sessionId":"s","inputSeq":null}'],
    ['no sessionId', '{"seq":1,"inputSeq":null}'],
    ['a bad inputSeq', '{"seq":1,"sessionId":"s","inputSeq":"2"}'],
  ])('yields %s as a malformed event with the raw text instead of throwing', (_label, raw) => {
    const event = parseStreamEntry('sess', ['9-1', ['type', 'weird', 'data', raw]]);
    expect(event).toEqual({ kind: 'event', id: '9-1', type: 'weird', data: { sessionId: 'sess', inputSeq: null, seq: 0, raw } });
    expect(isMalformed(event)).toBe(true);
  });

  it('tolerates missing fields', () => {
    expect(parseStreamEntry('s', ['1-1', []])).toEqual({ kind: 'event', id: '1-1', type: '', data: { sessionId: 's', inputSeq: null, seq: 0, raw: null } });
  });
});
