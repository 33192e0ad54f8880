import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { dropDiscarded } from '../../../src/gateway/chat/drop-discarded.js';
import { UiMessageChunkMapper, type ChunkSourceEvent, type UiMessageChunk } from '../../../src/gateway/chat/ui-message-chunks.js';

// The mapper's chunk type must be assignable to the SDK's own.
const asSdkChunk = (chunk: UiMessageChunk): UIMessageChunk => chunk;

function ev(type: string, data: Record<string, unknown> = {}): ChunkSourceEvent {
  return { type, data: Object.assign({ sessionId: 's1', inputSeq: 1, seq: 0 }, data) };
}

const S = 'stream';

function finished(error: { code: string; message: string } | null = null): ChunkSourceEvent {
  return ev('input_finished', { status: error === null ? 'completed' : 'failed', error, finalText: '' });
}

async function rebuild(events: ChunkSourceEvent[]): Promise<{ message: UIMessage | undefined; chunks: UiMessageChunk[]; errors: unknown[] }> {
  const mapper = new UiMessageChunkMapper('s1:1');
  const chunks = events.flatMap((event) => mapper.push(event));
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(asSdkChunk(chunk));
      controller.close();
    },
  });
  const errors: unknown[] = [];
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, onError: (e) => errors.push(e) })) message = m;
  return { message, chunks, errors };
}

const toolRound = [
  ev('input_started', { attempt: 1 }),
  ev('round_started', { roundIndex: 0 }),
  ev('stream_started', { streamId: S, attempt: 1 }),
  ev('stream_completed', { streamId: S, attempt: 1, success: true }),
  ev('tool_call_started', { name: 'lookup', toolCallId: 'c1', toolInput: { q: 'x' }, attempt: 1 }),
  ev('tool_call_completed', { name: 'lookup', toolCallId: 'c1', toolInput: { q: 'x' }, output: 'found', failed: false, durationMs: 3 }),
  ev('round_completed', { roundIndex: 0, hasTools: true }),
  ev('round_started', { roundIndex: 1 }),
  ev('stream_started', { streamId: S, attempt: 1 }),
  ev('stream_delta', { streamId: S, text: 'Hel' }),
  ev('stream_delta', { streamId: S, text: 'lo' }),
  ev('stream_completed', { streamId: S, attempt: 1, success: true }),
  ev('round_completed', { roundIndex: 1, hasTools: false }),
];

describe('UiMessageChunkMapper', () => {
  it('rebuilds a tool round and a streamed answer into one assistant message', async () => {
    const { message, chunks, errors } = await rebuild([...toolRound, finished()]);
    expect(errors).toEqual([]);
    expect(chunks[0]).toEqual({ type: 'start', messageId: 's1:1' });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(message?.id).toBe('s1:1');
    expect(message?.role).toBe('assistant');
    expect(message?.parts).toEqual([
      { type: 'step-start' },
      { type: 'tool-lookup', toolCallId: 'c1', state: 'output-available', input: { q: 'x' }, output: 'found' },
      { type: 'step-start' },
      { type: 'text', text: 'Hello', state: 'done' },
    ]);
  });

  it('maps thinking deltas to a reasoning part before the text', async () => {
    const { message } = await rebuild([
      ev('round_started', { roundIndex: 0 }),
      ev('stream_think_delta', { streamId: S, text: 'hmm ' }),
      ev('stream_think_delta', { streamId: S, text: 'ok' }),
      ev('stream_delta', { streamId: S, text: 'Answer' }),
      ev('stream_completed', { streamId: S, attempt: 1, success: true }),
      ev('round_completed', { roundIndex: 0, hasTools: false }),
      finished(),
    ]);
    expect(message?.parts).toMatchObject([
      { type: 'step-start' },
      { type: 'reasoning', text: 'hmm ok', state: 'done' },
      { type: 'text', text: 'Answer', state: 'done' },
    ]);
  });

  it('shows a failed tool as output-error, once', async () => {
    const { message, chunks } = await rebuild([
      ev('round_started', { roundIndex: 0 }),
      ev('tool_call_started', { name: 'fetch', toolCallId: 'c9', toolInput: { url: 'u' }, attempt: 1 }),
      ev('tool_call_failed', { name: 'fetch', toolCallId: 'c9', toolInput: { url: 'u' }, output: 'timeout', errorCode: 'tool.timeout' }),
      ev('tool_call_completed', { name: 'fetch', toolCallId: 'c9', toolInput: { url: 'u' }, output: 'timeout', failed: true, durationMs: 9 }),
      ev('round_completed', { roundIndex: 0, hasTools: true }),
      finished(),
    ]);
    expect(chunks.filter((c) => c.type === 'tool-output-error')).toHaveLength(1);
    expect(message?.parts[1]).toMatchObject({ type: 'tool-fetch', toolCallId: 'c9', state: 'output-error', errorText: 'timeout' });
  });

  it('writes an error chunk before finish when the input failed', async () => {
    const { chunks, errors } = await rebuild([
      ev('round_started', { roundIndex: 0 }),
      ev('stream_delta', { streamId: S, text: 'par' }),
      finished({ code: 'llm.timeout', message: 'no answer' }),
    ]);
    const types = chunks.map((c) => c.type);
    expect(types.slice(-4)).toEqual(['text-end', 'finish-step', 'error', 'finish']);
    expect(chunks.at(-2)).toEqual({ type: 'error', errorText: 'llm.timeout: no answer' });
    expect(chunks.at(-1)).toMatchObject({ finishReason: 'error' });
    expect(errors).toHaveLength(1);
  });

  it('maps a user input request to a data part and ignores events after the finish', async () => {
    const mapper = new UiMessageChunkMapper('s1:2');
    const chunks = mapper.push(ev('user_input_requested', { interactionId: 'i1', toolCallId: 'c1', prompt: 'Which?', options: ['a', 'b'] }));
    expect(chunks[1]).toEqual({ type: 'data-user-input-request', id: 'i1', data: { interactionId: 'i1', toolCallId: 'c1', prompt: 'Which?', options: ['a', 'b'] } });
    mapper.push(finished());
    expect(mapper.finished).toBe(true);
    expect(mapper.push(ev('stream_delta', { streamId: S, text: 'late' }))).toEqual([]);
  });
});

describe('dropDiscarded', () => {
  it('leaves out a discarded attempt known at replay time', async () => {
    const events = dropDiscarded([
      ev('round_started', { roundIndex: 0 }),
      ev('stream_started', { streamId: S, attempt: 1 }),
      ev('stream_delta', { streamId: S, text: 'broken ' }),
      ev('stream_completed', { streamId: S, attempt: 1, success: false }),
      ev('stream_discarded', { streamId: S, attempt: 1, reason: 'timeout' }),
      ev('stream_started', { streamId: S, attempt: 2 }),
      ev('stream_delta', { streamId: S, text: 'good' }),
      ev('stream_completed', { streamId: S, attempt: 2, success: true }),
      ev('round_completed', { roundIndex: 0, hasTools: false }),
      finished(),
    ]);
    const { message } = await rebuild(events);
    expect(message?.parts).toEqual([{ type: 'step-start' }, { type: 'text', text: 'good', state: 'done' }]);
  });

  it('leaves out a lost worker partial round but keeps its completed rounds', async () => {
    const events = dropDiscarded([
      ev('input_started', { attempt: 1 }),
      ...toolRound.slice(1, 7),
      ev('round_started', { roundIndex: 1 }),
      ev('stream_started', { streamId: S, attempt: 1 }),
      ev('stream_delta', { streamId: S, text: 'lost text' }),
      ev('input_resumed', { reason: 'worker_lost', attempt: 2 }),
      ev('round_started', { roundIndex: 1 }),
      ev('stream_started', { streamId: S, attempt: 1 }),
      ev('stream_delta', { streamId: S, text: 'kept' }),
      ev('stream_completed', { streamId: S, attempt: 1, success: true }),
      ev('round_completed', { roundIndex: 1, hasTools: false }),
      finished(),
    ]);
    const { message } = await rebuild(events);
    expect(message?.parts.map((p) => p.type)).toEqual(['step-start', 'tool-lookup', 'step-start', 'text']);
    expect(message?.parts[3]).toMatchObject({ text: 'kept' });
  });
});
