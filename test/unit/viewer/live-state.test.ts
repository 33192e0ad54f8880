import { describe, expect, it } from 'vitest';
import { applyEvent, emptyLiveState, visibleStreams } from '../../../viewer/src/live-state.js';

let n = 0;
function event(type: string, data: Record<string, unknown>) {
  n += 1;
  return { id: `1000-${n}`, type, data: Object.assign({ sessionId: 's', seq: n }, data) };
}

describe('viewer live state', () => {
  it('rebuilds streamed text, and a replayed id is applied once', () => {
    const state = emptyLiveState();
    const started = event('stream_started', { inputSeq: 1, streamId: 'a', attempt: 1 });
    const delta = event('stream_delta', { inputSeq: 1, streamId: 'a', text: 'Hello ' });
    expect(applyEvent(state, started)).toBe(true);
    expect(applyEvent(state, delta)).toBe(true);
    expect(applyEvent(state, delta)).toBe(false);
    applyEvent(state, event('stream_delta', { inputSeq: 1, streamId: 'a', text: 'world' }));
    expect(visibleStreams(state, () => false).map((s) => s.text)).toEqual(['Hello world']);
  });

  it('hides a stream once its persisted message is loaded', () => {
    const state = emptyLiveState();
    applyEvent(state, event('stream_delta', { inputSeq: 2, streamId: 'b', text: 'done' }));
    applyEvent(state, event('stream_completed', { inputSeq: 2, streamId: 'b', attempt: 1, success: true }));
    applyEvent(state, event('message_appended', { inputSeq: 2, messageSeq: 7, role: 'assistant', kind: 'message', roundIndex: 0 }));
    expect(visibleStreams(state, () => false)).toHaveLength(1);
    expect(visibleStreams(state, (seq) => seq === 7)).toHaveLength(0);
  });

  it('drops a lost worker’s attempt and a discarded stream', () => {
    const state = emptyLiveState();
    applyEvent(state, event('stream_delta', { inputSeq: 3, streamId: 'c', text: 'partial' }));
    applyEvent(state, event('input_resumed', { inputSeq: 3, reason: 'worker_lost', attempt: 2 }));
    applyEvent(state, event('stream_delta', { inputSeq: 3, streamId: 'd', text: 'again' }));
    applyEvent(state, event('stream_discarded', { inputSeq: 3, streamId: 'd', attempt: 2, reason: 'retry' }));
    applyEvent(state, event('stream_delta', { inputSeq: 3, streamId: 'e', text: 'final' }));
    expect(visibleStreams(state, () => false).map((s) => s.text)).toEqual(['final']);
  });

  it('tracks tool calls with durations and the open question', () => {
    const state = emptyLiveState();
    applyEvent(state, event('tool_call_started', { inputSeq: 4, name: 'search', toolCallId: 't1', toolInput: { q: 'x' }, attempt: 1 }));
    applyEvent(state, event('tool_call_completed', { inputSeq: 4, name: 'search', toolCallId: 't1', toolInput: { q: 'x' }, output: 'ok', failed: false, durationMs: 12 }));
    expect(state.tools.get('t1')).toMatchObject({ status: 'done', output: 'ok', durationMs: 12 });
    applyEvent(state, event('user_input_requested', { inputSeq: 4, interactionId: 'i1', toolCallId: 't2', prompt: 'Which?', options: ['a', 'b'] }));
    expect(state.question).toMatchObject({ interactionId: 'i1', prompt: 'Which?', options: ['a', 'b'] });
    applyEvent(state, event('input_started', { inputSeq: 5, attempt: 1 }));
    expect(state.question).toBeNull();
  });

  it('keeps each round and each input apart although the loop names every stream main', () => {
    const state = emptyLiveState();
    for (const inputSeq of [1, 2]) {
      applyEvent(state, event('stream_started', { inputSeq, streamId: 'main', attempt: 1 }));
      applyEvent(state, event('stream_delta', { inputSeq, streamId: 'main', text: `round one of ${inputSeq}` }));
      applyEvent(state, event('stream_completed', { inputSeq, streamId: 'main', attempt: 1, success: true }));
      applyEvent(state, event('message_appended', { inputSeq, messageSeq: inputSeq * 10, role: 'assistant', kind: 'message', roundIndex: 0 }));
      applyEvent(state, event('stream_started', { inputSeq, streamId: 'main', attempt: 1 }));
      applyEvent(state, event('stream_delta', { inputSeq, streamId: 'main', text: `round two of ${inputSeq}` }));
    }
    const loaded = (seq: number) => seq === 10 || seq === 20;
    expect(visibleStreams(state, loaded).map((s) => s.text)).toEqual(['round two of 1', 'round two of 2']);
    expect(visibleStreams(state, () => false).map((s) => s.text)).toEqual(['round one of 1', 'round two of 1', 'round one of 2', 'round two of 2']);
  });
});
