import type { Interaction, StreamEvent } from './types.js';

/** A model answer as it streams, before (or instead of) its persisted message. */
export interface LiveStream {
  streamId: string;
  inputSeq: number | null;
  text: string;
  think: string;
  completed: boolean;
  /** Dropped: a failed or discarded attempt, a lost worker's attempt, or an input that ended first. */
  dropped: boolean;
  /** The persisted assistant message that holds this text, once `message_appended` named it. */
  messageSeq: number | null;
}

export interface LiveTool {
  toolCallId: string;
  name: string;
  input: unknown;
  inputSeq: number | null;
  status: 'running' | 'done' | 'failed';
  output: string | null;
  durationMs: number | null;
  errorCode: string | null;
  startedAt: number;
}

export interface LiveChild {
  id: string;
  agent: string | null;
  status: string;
}

export interface TimerFiring {
  timerId: string;
  fireCount: number;
  outcome: string;
  at: string;
}

/** What the viewer learned from the event stream; rebuilt by replaying it from the session's cursor. */
export interface LiveState {
  lastId: string;
  events: StreamEvent[];
  streams: LiveStream[];
  tools: Map<string, LiveTool>;
  question: (Interaction & { inputSeq: number | null }) | null;
  children: Map<string, LiveChild>;
  timers: TimerFiring[];
  /** Tokens per running input, summed over its rounds' `usage_updated` (dropped when it finishes). */
  usage: Map<number, Map<number, number>>;
}

const MAX_RAW_EVENTS = 2000;

export function emptyLiveState(): LiveState {
  return { lastId: '', events: [], streams: [], tools: new Map(), question: null, children: new Map(), timers: [], usage: new Map() };
}

/** Compares two Redis stream ids (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const ms = BigInt(am) - BigInt(bm);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

/** Applies one event; answers false when it was already applied (a replayed or repeated id). */
export function applyEvent(state: LiveState, event: StreamEvent): boolean {
  if (/^\d+-\d+$/.test(event.id)) {
    if (state.lastId !== '' && compareIds(event.id, state.lastId) <= 0) return false;
    state.lastId = event.id;
  }
  state.events.push(event);
  if (state.events.length > MAX_RAW_EVENTS) state.events.splice(0, state.events.length - MAX_RAW_EVENTS);
  const handler = HANDLERS[event.type];
  if (handler !== undefined) handler(state, event.data, inputSeqOf(event.data), event.id);
  return true;
}

type Handler = (state: LiveState, data: Record<string, unknown>, inputSeq: number | null, id: string) => void;

const HANDLERS: Record<string, Handler> = {
  // The loop names every stream `main`: a stream is the one `stream_started` opened last for its input.
  stream_started: (state, _data, inputSeq, id) => {
    openStream(state, id, inputSeq);
  },
  stream_delta: (state, data, inputSeq, id) => {
    streamOf(state, id, inputSeq).text += str(data.text);
  },
  stream_think_delta: (state, data, inputSeq, id) => {
    streamOf(state, id, inputSeq).think += str(data.text);
  },
  stream_completed: (state, data, inputSeq, id) => {
    const stream = streamOf(state, id, inputSeq);
    stream.completed = true;
    if (data.success === false) stream.dropped = true;
  },
  stream_discarded: (state, _data, inputSeq, id) => {
    const stream = streamOf(state, id, inputSeq);
    stream.completed = true;
    stream.dropped = true;
  },
  message_appended: (state, data, inputSeq) => {
    if (data.role !== 'assistant' || typeof data.messageSeq !== 'number') return;
    const stream = state.streams.find((s) => s.inputSeq === inputSeq && s.completed && !s.dropped && s.messageSeq === null);
    if (stream !== undefined) stream.messageSeq = data.messageSeq;
  },
  input_started: (state) => {
    state.question = null;
  },
  input_resumed: (state, data, inputSeq) => {
    state.question = null;
    if (data.reason !== 'worker_lost') return;
    for (const stream of state.streams) if (stream.inputSeq === inputSeq && stream.messageSeq === null) stream.dropped = true;
  },
  input_finished: (state, _data, inputSeq) => {
    // The finished input's usage is in the session's stats and the input's result from now on.
    if (inputSeq !== null) state.usage.delete(inputSeq);
    for (const stream of state.streams) if (stream.inputSeq === inputSeq && stream.messageSeq === null) stream.dropped = true;
    for (const tool of state.tools.values()) if (tool.inputSeq === inputSeq && tool.status === 'running') tool.status = 'failed';
  },
  tool_call_started: (state, data, inputSeq) => {
    const id = str(data.toolCallId);
    state.tools.set(id, {
      toolCallId: id,
      name: str(data.name),
      input: data.toolInput,
      inputSeq,
      status: 'running',
      output: null,
      durationMs: null,
      errorCode: null,
      startedAt: Date.now(),
    });
  },
  tool_call_completed: (state, data, inputSeq) => {
    const tool = toolOf(state, data, inputSeq);
    tool.status = data.failed === true ? 'failed' : 'done';
    tool.output = str(data.output);
    tool.durationMs = typeof data.durationMs === 'number' ? data.durationMs : null;
  },
  tool_call_failed: (state, data, inputSeq) => {
    const tool = toolOf(state, data, inputSeq);
    tool.status = 'failed';
    tool.output = str(data.output);
    tool.errorCode = typeof data.errorCode === 'string' ? data.errorCode : null;
    if (tool.durationMs === null) tool.durationMs = Date.now() - tool.startedAt;
  },
  user_input_requested: (state, data, inputSeq) => {
    state.question = {
      interactionId: str(data.interactionId),
      toolCallId: str(data.toolCallId),
      prompt: str(data.prompt),
      options: Array.isArray(data.options) ? data.options.map(String) : null,
      inputSeq,
    };
  },
  subagent_started: (state, data) => {
    const id = str(data.childSessionId);
    state.children.set(id, { id, agent: typeof data.agent === 'string' ? data.agent : null, status: 'running' });
  },
  subagent_finished: (state, data) => {
    const id = str(data.childSessionId);
    const child = state.children.get(id);
    state.children.set(id, { id, agent: child?.agent ?? null, status: str(data.status) || 'finished' });
  },
  timer_fired: (state, data) => {
    state.timers.push({ timerId: str(data.timerId), fireCount: Number(data.fireCount ?? 0), outcome: str(data.outcome), at: new Date().toISOString() });
  },
  usage_updated: (state, data, inputSeq) => {
    if (inputSeq === null) return;
    const usage = data.usage as Record<string, unknown> | undefined;
    const total = typeof usage?.totalTokens === 'number' ? usage.totalTokens : 0;
    const rounds = state.usage.get(inputSeq) ?? new Map<number, number>();
    rounds.set(Number(data.roundIndex ?? 0), total);
    state.usage.set(inputSeq, rounds);
  },
};

/** Streams still worth showing: not dropped, and not yet shown as their persisted message. */
export function visibleStreams(state: LiveState, persisted: (seq: number) => boolean): LiveStream[] {
  return state.streams.filter((s) => !s.dropped && (s.text !== '' || s.think !== '') && (s.messageSeq === null || !persisted(s.messageSeq)));
}

export function liveTokens(state: LiveState): number {
  let total = 0;
  for (const rounds of state.usage.values()) for (const tokens of rounds.values()) total += tokens;
  return total;
}

/** A new stream of the input, keyed by the id of its `stream_started` entry. */
function openStream(state: LiveState, id: string, inputSeq: number | null): LiveStream {
  const stream: LiveStream = { streamId: id, inputSeq, text: '', think: '', completed: false, dropped: false, messageSeq: null };
  state.streams.push(stream);
  return stream;
}

/** The input's open stream; one is opened when the page joined mid-stream (a cursor inside it). */
function streamOf(state: LiveState, id: string, inputSeq: number | null): LiveStream {
  for (let i = state.streams.length - 1; i >= 0; i -= 1) {
    const stream = state.streams[i];
    if (stream !== undefined && stream.inputSeq === inputSeq && !stream.completed && !stream.dropped) return stream;
  }
  return openStream(state, id, inputSeq);
}

function toolOf(state: LiveState, data: Record<string, unknown>, inputSeq: number | null): LiveTool {
  const id = str(data.toolCallId);
  let tool = state.tools.get(id);
  if (tool === undefined) {
    tool = { toolCallId: id, name: str(data.name), input: data.toolInput, inputSeq, status: 'running', output: null, durationMs: null, errorCode: null, startedAt: Date.now() };
    state.tools.set(id, tool);
  }
  return tool;
}

function inputSeqOf(data: Record<string, unknown>): number | null {
  return typeof data.inputSeq === 'number' ? data.inputSeq : null;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}
