/**
 * Anthropic's raw stream events → one {@link LlmResponse}, forwarding text and thinking deltas as
 * they arrive.
 *
 * A Messages stream is `message_start`, then per content block `content_block_start`, deltas and
 * `content_block_stop`, then `message_delta` (stop reason, final usage) and `message_stop`; `ping`
 * may come anywhere. Blocks are addressed by `index`, and a reply may hold several text, thinking
 * and `tool_use` blocks. A `tool_use` block's input arrives as `input_json_delta` fragments that
 * only form JSON once all are joined; the joined text becomes the call's `arguments` as is — never
 * repaired, even when `max_tokens` cut it short (power-loop edge case 24: the loop reports invalid
 * arguments to the model instead of running a half-written call).
 *
 * Thinking signatures (`signature_delta`) are dropped: the internal message type has no place for
 * them and thinking is never sent back (power-loop edge case 7 defers the same).
 *
 * A stream that breaks the protocol (a delta for a block that never started, a text delta on a
 * tool block, no `message_stop`) is an `LlmBadResponseError`, which the retry policy retries.
 * Event types this code does not know are ignored: Anthropic documents that it adds new ones.
 */
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { LlmBadResponseError } from '../../core/errors/index.js';
import type { ToolCall } from '../../core/messages.js';
import type { LlmResponse, LlmStreamHandlers } from '../../core/ports/llm.js';
import { mapStopReason } from './map-stop-reason.js';
import { emptyTally, toLlmUsage, updateTally, type AnthropicUsageFields, type UsageTally } from './map-usage.js';

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

/** A stream event as it may arrive: the SDK's types, or anything else the server sent. */
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

  /** Takes one event; throws `LlmBadResponseError` when it breaks the protocol. */
  push(event: AnthropicStreamEvent): void {
    const type = (event as { type?: unknown }).type;
    if (type === 'message_start') return this.#onMessageStart(event as Extract<RawMessageStreamEvent, { type: 'message_start' }>);
    if (!isKnownType(type)) return;
    if (this.#phase !== 'streaming') throw badStream(`${type} ${this.#phase === 'stopped' ? 'after message_stop' : 'before message_start'}`);
    switch (type) {
      case 'content_block_start':
        return this.#onBlockStart(event as Extract<RawMessageStreamEvent, { type: 'content_block_start' }>);
      case 'content_block_delta':
        return this.#onBlockDelta(event as Extract<RawMessageStreamEvent, { type: 'content_block_delta' }>);
      case 'content_block_stop':
        this.#openBlock(event as { index?: unknown }, type).open = false;
        return;
      case 'message_delta':
        return this.#onMessageDelta(event as Extract<RawMessageStreamEvent, { type: 'message_delta' }>);
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

  #onMessageStart(event: Extract<RawMessageStreamEvent, { type: 'message_start' }>): void {
    if (this.#phase !== 'before_start') throw badStream('a second message_start');
    const message = (event as { message?: unknown }).message;
    if (typeof message !== 'object' || message === null) throw badStream('message_start without a message');
    const { model, usage, stop_reason } = message as { model?: unknown; usage?: AnthropicUsageFields; stop_reason?: unknown };
    if (typeof model === 'string' && model !== '') this.#model = model;
    if (typeof stop_reason === 'string') this.#stopReason = stop_reason;
    this.#usage = updateTally(this.#usage, usage);
    this.#phase = 'streaming';
  }

  #onBlockStart(event: Extract<RawMessageStreamEvent, { type: 'content_block_start' }>): void {
    const index = blockIndex(event, 'content_block_start');
    if (this.#blocks.has(index)) throw badStream(`content_block_start for block ${index}, which already started`, { index });
    const block = (event as { content_block?: unknown }).content_block as Record<string, unknown> | undefined;
    if (typeof block !== 'object' || block === null) throw badStream('content_block_start without a content_block', { index });
    switch (block.type) {
      case 'text':
        this.#blocks.set(index, { kind: 'text', open: true });
        if (typeof block.text === 'string') this.#addText(block.text);
        return;
      case 'thinking':
        this.#blocks.set(index, { kind: 'thinking', open: true });
        if (typeof block.thinking === 'string') this.#addThinking(block.thinking);
        return;
      case 'tool_use': {
        const { id, name } = block;
        if (typeof id !== 'string' || typeof name !== 'string' || name === '') throw badStream('a tool_use block without id or name', { index });
        this.#blocks.set(index, { kind: 'tool_use', open: true, id, name, fragments: [], initialInput: block.input });
        return;
      }
      default:
        // redacted_thinking, server tool blocks and future block types carry nothing we keep.
        this.#blocks.set(index, { kind: 'other', open: true });
    }
  }

  #onBlockDelta(event: Extract<RawMessageStreamEvent, { type: 'content_block_delta' }>): void {
    const block = this.#openBlock(event, 'content_block_delta');
    const delta = (event as { delta?: unknown }).delta as Record<string, unknown> | undefined;
    if (typeof delta !== 'object' || delta === null) throw badStream('content_block_delta without a delta');
    switch (delta.type) {
      case 'text_delta':
        this.#addText(expectDelta(block, 'text', delta.text, 'text_delta'));
        return;
      case 'thinking_delta':
        this.#addThinking(expectDelta(block, 'thinking', delta.thinking, 'thinking_delta'));
        return;
      case 'signature_delta':
        expectDelta(block, 'thinking', delta.signature, 'signature_delta');
        return;
      case 'input_json_delta': {
        const fragment = expectDelta(block, 'tool_use', delta.partial_json, 'input_json_delta');
        if (block.kind === 'tool_use') block.fragments.push(fragment);
        return;
      }
      default:
      // citations_delta and future delta types: nothing to keep.
    }
  }

  #onMessageDelta(event: Extract<RawMessageStreamEvent, { type: 'message_delta' }>): void {
    const delta = (event as { delta?: { stop_reason?: unknown } | null }).delta;
    if (typeof delta?.stop_reason === 'string') this.#stopReason = delta.stop_reason;
    this.#usage = updateTally(this.#usage, (event as { usage?: AnthropicUsageFields }).usage);
  }

  /** The block an event addresses, which must have started and not stopped. */
  #openBlock(event: { index?: unknown }, type: string): BlockState {
    const index = blockIndex(event, type);
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

const KNOWN_TYPES = new Set(['content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);

function isKnownType(type: unknown): type is 'content_block_start' | 'content_block_delta' | 'content_block_stop' | 'message_delta' | 'message_stop' {
  return typeof type === 'string' && KNOWN_TYPES.has(type);
}

function blockIndex(event: { index?: unknown }, type: string): number {
  const index = event.index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) throw badStream(`${type} without a valid block index`);
  return index;
}

/** The delta's string payload, after checking it belongs on this kind of block. */
function expectDelta(block: BlockState, kind: BlockState['kind'], value: unknown, type: string): string {
  if (block.kind !== kind) throw badStream(`${type} on a ${block.kind} block`);
  if (typeof value !== 'string') throw badStream(`${type} without its string payload`);
  return value;
}

/** The joined input fragments; a call with no input at all gets `{}`. */
function toolArguments(block: Extract<BlockState, { kind: 'tool_use' }>): string {
  const joined = block.fragments.join('');
  if (joined.trim() !== '') return joined;
  const initial = block.initialInput;
  const hasInitial = typeof initial === 'object' && initial !== null && Object.keys(initial).length > 0;
  return hasInitial ? JSON.stringify(initial) : '{}';
}

function badStream(problem: string, details: Record<string, unknown> = {}): LlmBadResponseError {
  return new LlmBadResponseError(`malformed Anthropic stream: ${problem}`, { details: { provider: 'anthropic', ...details } });
}
