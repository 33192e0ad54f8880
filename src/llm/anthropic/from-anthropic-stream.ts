/**
 * Anthropic's raw stream events → one {@link LlmResponse}, forwarding text and thinking deltas as
 * they arrive.
 *
 * A Messages stream is `message_start`, then per content block `content_block_start`, deltas and
 * `content_block_stop`, then `message_delta` (stop reason, final usage) and `message_stop`; `ping`
 * may come anywhere. Blocks are addressed by `index`, and a reply may hold several text, thinking
 * and `tool_use` blocks. A `tool_use` block's input arrives as `input_json_delta` fragments that
 * only form JSON once all are joined; the joined text becomes the call's `arguments` as is — never
 * repaired, even when `max_tokens` cut it short (the loop reports invalid
 * arguments to the model instead of running a half-written call).
 *
 * Thinking signatures (`signature_delta`) are dropped: the internal message type has no place for
 * them and thinking is never sent back (docs/agent-loop.md, "Lessons kept from power-loop").
 *
 * An event that is not one (`data: null`, an event without the fields it needs: see
 * `read-stream-event.ts`) or a stream that breaks the protocol (a delta for a block that never
 * started, a text delta on a tool block, no `message_stop`) is an `LlmBadResponseError`, which the
 * retry policy retries.
 * Event types this code does not know are ignored: Anthropic documents that it adds new ones.
 */
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ToolCall } from '../../core/messages.js';
import type { LlmResponse, LlmStreamHandlers } from '../../core/ports/llm.js';
import { mapStopReason } from './map-stop-reason.js';
import { emptyTally, toLlmUsage, updateTally, type UsageTally } from './map-usage.js';
import { badStream, readStreamEvent, type BlockDelta, type BlockStart, type StreamEvent } from './read-stream-event.js';

/** What is known about one content block. */
type BlockState =
  | { kind: 'text'; open: boolean }
  | { kind: 'thinking'; open: boolean }
  | { kind: 'tool_use'; open: boolean; id: string; name: string; fragments: string[]; initialInput: unknown }
  | { kind: 'other'; open: boolean };

/** Options of {@link AnthropicStreamAccumulator}. */
export interface StreamAccumulatorOptions {
  /** Called for every non-empty text or thinking delta, in stream order. */
  handlers?: LlmStreamHandlers;
  /** The model asked for; reported when `message_start` names none. */
  requestedModel: string;
}

/** A stream event as the SDK types it; what actually arrives may be any JSON value (see {@link readStreamEvent}). */
export type AnthropicStreamEvent = RawMessageStreamEvent | { type: string; [key: string]: unknown };

/** Feed it every event with {@link push}, then call {@link finish}. One instance per call. */
export class AnthropicStreamAccumulator {
  readonly #handlers: LlmStreamHandlers;
  readonly #blocks = new Map<number, BlockState>();
  readonly #text: string[] = [];
  readonly #thinking: string[] = [];
  #phase: 'before_start' | 'streaming' | 'stopped' = 'before_start';
  #usage: UsageTally = emptyTally();
  #stopReason: string | null = null;
  #model: string;

  constructor(options: StreamAccumulatorOptions) {
    this.#handlers = options.handlers ?? {};
    this.#model = options.requestedModel;
  }

  /** True once `message_stop` arrived. */
  get complete(): boolean {
    return this.#phase === 'stopped';
  }

  /**
   * Takes one event as the SDK yielded it — any JSON value, checked by {@link readStreamEvent};
   * throws `LlmBadResponseError` when it is not a valid event or breaks the protocol.
   */
  push(value: unknown): void {
    const event = readStreamEvent(value);
    if (event.type === 'message_start') return this.#onMessageStart(event);
    if (event.type === 'ignored') return;
    if (this.#phase !== 'streaming') throw badStream(`${event.type} ${this.#phase === 'stopped' ? 'after message_stop' : 'before message_start'}`);
    switch (event.type) {
      case 'content_block_start':
        return this.#onBlockStart(event.index, event.block);
      case 'content_block_delta':
        return this.#onBlockDelta(event.index, event.delta);
      case 'content_block_stop':
        this.#openBlock(event.index, event.type).open = false;
        return;
      case 'message_delta':
        if (event.stopReason !== null) this.#stopReason = event.stopReason;
        this.#usage = updateTally(this.#usage, event.usage);
        return;
      case 'message_stop':
        this.#phase = 'stopped';
        return;
    }
  }

  /** The response; throws `LlmBadResponseError` when the stream ended before `message_stop`. */
  finish(): LlmResponse {
    if (this.#phase !== 'stopped') throw badStream('the stream ended before message_stop');
    const toolCalls: ToolCall[] = [];
    for (const block of this.#blocks.values()) {
      if (block.kind === 'tool_use') toolCalls.push({ id: block.id, name: block.name, arguments: toolArguments(block) });
    }
    return {
      text: this.#text.join(''),
      thinking: this.#thinking.join(''),
      toolCalls,
      ...mapStopReason(this.#stopReason),
      usage: toLlmUsage(this.#usage),
      model: this.#model,
      provider: 'anthropic',
    };
  }

  #onMessageStart(event: Extract<StreamEvent, { type: 'message_start' }>): void {
    if (this.#phase !== 'before_start') throw badStream('a second message_start');
    if (event.model !== null) this.#model = event.model;
    if (event.stopReason !== null) this.#stopReason = event.stopReason;
    this.#usage = updateTally(this.#usage, event.usage);
    this.#phase = 'streaming';
  }

  #onBlockStart(index: number, block: BlockStart): void {
    if (this.#blocks.has(index)) throw badStream(`content_block_start for block ${index}, which already started`, { index });
    switch (block.type) {
      case 'text':
        this.#blocks.set(index, { kind: 'text', open: true });
        return this.#addText(block.text);
      case 'thinking':
        this.#blocks.set(index, { kind: 'thinking', open: true });
        return this.#addThinking(block.thinking);
      case 'tool_use':
        this.#blocks.set(index, { kind: 'tool_use', open: true, id: block.id, name: block.name, fragments: [], initialInput: block.input });
        return;
      default:
        this.#blocks.set(index, { kind: 'other', open: true });
    }
  }

  #onBlockDelta(index: number, delta: BlockDelta): void {
    const block = this.#openBlock(index, 'content_block_delta');
    if (delta.type === 'other') return;
    if (block.kind !== DELTA_BLOCK_KIND[delta.type]) throw badStream(`${delta.type} on a ${block.kind} block`, { index });
    if (delta.type === 'text_delta') this.#addText(delta.payload);
    else if (delta.type === 'thinking_delta') this.#addThinking(delta.payload);
    else if (delta.type === 'input_json_delta' && block.kind === 'tool_use') block.fragments.push(delta.payload);
    // signature_delta: dropped (see the module comment).
  }

  /** The block an event addresses, which must have started and not stopped. */
  #openBlock(index: number, type: string): BlockState {
    const block = this.#blocks.get(index);
    if (block === undefined) throw badStream(`${type} for block ${index}, which never started`, { index });
    if (!block.open) throw badStream(`${type} for block ${index}, which already stopped`, { index });
    return block;
  }

  #addText(text: string): void {
    if (text === '') return;
    this.#text.push(text);
    this.#handlers.onTextDelta?.(text);
  }

  #addThinking(text: string): void {
    if (text === '') return;
    this.#thinking.push(text);
    this.#handlers.onThinkingDelta?.(text);
  }
}

/** The kind of block each delta type belongs on. */
const DELTA_BLOCK_KIND: Record<Exclude<BlockDelta['type'], 'other'>, BlockState['kind']> = {
  text_delta: 'text',
  thinking_delta: 'thinking',
  signature_delta: 'thinking',
  input_json_delta: 'tool_use',
};

/** The joined input fragments; a call with no input at all gets `{}`. */
function toolArguments(block: Extract<BlockState, { kind: 'tool_use' }>): string {
  const joined = block.fragments.join('');
  if (joined.trim() !== '') return joined;
  const initial = block.initialInput;
  const hasInitial = typeof initial === 'object' && initial !== null && Object.keys(initial).length > 0;
  return hasInitial ? JSON.stringify(initial) : '{}';
}
