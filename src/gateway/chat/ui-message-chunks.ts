/**
 * Maps a session's stream events to the AI SDK's UI message stream chunks (protocol v1), so a
 * `useChat` client rebuilds one assistant message per input. Pure: no I/O, no `ai` import; the
 * chunk type below is the subset of the SDK's `UIMessageChunk` this mapper writes.
 */

/** One UI message stream chunk, as the AI SDK's `UIMessageChunk` spells it. */
export type UiMessageChunk =
  | { type: 'start'; messageId: string; messageMetadata?: Record<string, unknown> }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'data-user-input-request'; id: string; data: UserInputRequestData }
  | { type: 'error'; errorText: string }
  | { type: 'finish'; finishReason: 'stop' | 'error' | 'other'; messageMetadata?: Record<string, unknown> };

/** The `data-user-input-request` part's data: a `request_user_input` question to answer with submit. */
export interface UserInputRequestData {
  interactionId: string;
  toolCallId: string;
  prompt: string;
  options: string[] | null;
}

/** What the mapper reads of a stream entry (`StreamEvent` has this shape). */
export interface ChunkSourceEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The message id of an input's assistant message, shared by the stream and `/messages`. */
export function assistantMessageId(sessionId: string, seq: number): string {
  return `${sessionId}:${seq}`;
}

function str(data: Record<string, unknown>, key: string): string {
  const value = data[key];
  return typeof value === 'string' ? value : '';
}

/**
 * Turns one input's events, in stream order, into chunks. Feed every event of the input to `push`;
 * `finished` turns true at `input_finished`, after which the caller writes `[DONE]`.
 */
export class UiMessageChunkMapper {
  private started = false;
  private inStep = false;
  private openText: string | null = null;
  private openReasoning: string | null = null;
  private readonly toolsStarted = new Set<string>();
  private readonly toolsEnded = new Set<string>();
  private streamKey: string | null = null;
  private parts = 0;
  finished = false;

  constructor(private readonly messageId: string) {}

  /** The chunks for one event; empty for events the UI message has no place for. */
  push(event: ChunkSourceEvent): UiMessageChunk[] {
    if (this.finished) return [];
    const out: UiMessageChunk[] = [];
    this.ensureStart(out);
    const data = event.data;
    switch (event.type) {
      case 'round_started':
        this.closeParts(out);
        this.endStep(out);
        out.push({ type: 'start-step' });
        this.inStep = true;
        break;
      case 'round_completed':
        this.closeParts(out);
        this.endStep(out);
        break;
      case 'stream_delta':
        this.textDelta(out, str(data, 'streamId'), str(data, 'text'));
        break;
      case 'stream_think_delta':
        this.reasoningDelta(out, str(data, 'streamId'), str(data, 'text'));
        break;
      case 'stream_completed':
      case 'stream_discarded':
        this.closeParts(out);
        break;
      case 'tool_call_started':
        this.toolStarted(out, data);
        break;
      case 'tool_call_failed':
        this.toolEnded(out, str(data, 'toolCallId'), { type: 'tool-output-error', toolCallId: str(data, 'toolCallId'), errorText: str(data, 'output') });
        break;
      case 'tool_call_completed': {
        const toolCallId = str(data, 'toolCallId');
        const chunk: UiMessageChunk = data.failed === true
          ? { type: 'tool-output-error', toolCallId, errorText: str(data, 'output') }
          : { type: 'tool-output-available', toolCallId, output: str(data, 'output') };
        this.toolEnded(out, toolCallId, chunk);
        break;
      }
      case 'user_input_requested':
        out.push({
          type: 'data-user-input-request',
          id: str(data, 'interactionId'),
          data: {
            interactionId: str(data, 'interactionId'),
            toolCallId: str(data, 'toolCallId'),
            prompt: str(data, 'prompt'),
            options: Array.isArray(data.options) ? data.options.filter((o): o is string => typeof o === 'string') : null,
          },
        });
        break;
      case 'input_finished':
        this.finish(out, data);
        break;
      default:
        break;
    }
    return out;
  }

  /** The `start` chunk alone, for a response that opens before the input's first event. */
  start(): UiMessageChunk[] {
    const out: UiMessageChunk[] = [];
    this.ensureStart(out);
    return out;
  }

  private ensureStart(out: UiMessageChunk[]): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'start', messageId: this.messageId });
  }

  private ensureStep(out: UiMessageChunk[]): void {
    if (this.inStep) return;
    out.push({ type: 'start-step' });
    this.inStep = true;
  }

  private endStep(out: UiMessageChunk[]): void {
    if (!this.inStep) return;
    out.push({ type: 'finish-step' });
    this.inStep = false;
  }

  private closeParts(out: UiMessageChunk[]): void {
    if (this.openReasoning !== null) out.push({ type: 'reasoning-end', id: this.openReasoning });
    if (this.openText !== null) out.push({ type: 'text-end', id: this.openText });
    this.openReasoning = null;
    this.openText = null;
  }

  private textDelta(out: UiMessageChunk[], streamId: string, delta: string): void {
    if (delta === '') return;
    this.ensureStep(out);
    if (this.openReasoning !== null) {
      out.push({ type: 'reasoning-end', id: this.openReasoning });
      this.openReasoning = null;
    }
    if (this.openText === null || this.streamKey !== streamId) {
      if (this.openText !== null) out.push({ type: 'text-end', id: this.openText });
      this.openText = this.partId(streamId, 'text');
      out.push({ type: 'text-start', id: this.openText });
    }
    const id = this.openText;
    out.push({ type: 'text-delta', id, delta });
  }

  private reasoningDelta(out: UiMessageChunk[], streamId: string, delta: string): void {
    if (delta === '') return;
    this.ensureStep(out);
    if (this.openReasoning === null || this.streamKey !== streamId) {
      if (this.openReasoning !== null) out.push({ type: 'reasoning-end', id: this.openReasoning });
      this.openReasoning = this.partId(streamId, 'reasoning');
      out.push({ type: 'reasoning-start', id: this.openReasoning });
    }
    const id = this.openReasoning;
    out.push({ type: 'reasoning-delta', id, delta });
  }

  /** A fresh part id: a retried stream may reuse its stream id, and its text is a new part. */
  private partId(streamId: string, kind: string): string {
    this.streamKey = streamId;
    this.parts += 1;
    return `${streamId}:${kind}:${this.parts}`;
  }

  private toolStarted(out: UiMessageChunk[], data: Record<string, unknown>): void {
    const toolCallId = str(data, 'toolCallId');
    if (toolCallId === '' || this.toolsStarted.has(toolCallId)) return;
    this.toolsStarted.add(toolCallId);
    this.ensureStep(out);
    this.closeParts(out);
    const toolName = str(data, 'name');
    out.push({ type: 'tool-input-start', toolCallId, toolName });
    out.push({ type: 'tool-input-available', toolCallId, toolName, input: data.toolInput ?? null });
  }

  private toolEnded(out: UiMessageChunk[], toolCallId: string, chunk: UiMessageChunk): void {
    // A result for a call this message never showed (started before a resume point) has no part to land in.
    if (!this.toolsStarted.has(toolCallId) || this.toolsEnded.has(toolCallId)) return;
    this.toolsEnded.add(toolCallId);
    out.push(chunk);
  }

  private finish(out: UiMessageChunk[], data: Record<string, unknown>): void {
    this.closeParts(out);
    this.endStep(out);
    const error = data.error as { code?: unknown; message?: unknown } | null | undefined;
    const status = str(data, 'status');
    if (error !== null && error !== undefined) {
      const code = typeof error.code === 'string' ? error.code : 'internal';
      const message = typeof error.message === 'string' ? error.message : '';
      out.push({ type: 'error', errorText: `${code}: ${message}` });
    }
    const failed = error !== null && error !== undefined;
    out.push({ type: 'finish', finishReason: failed ? 'error' : status === 'completed' ? 'stop' : 'other', messageMetadata: { status } });
    this.finished = true;
  }
}
