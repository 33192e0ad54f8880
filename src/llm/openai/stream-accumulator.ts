/**
 * Chat Completions stream chunks → one response, calling the stream handlers as deltas arrive.
 * Knows nothing of HTTP or the SDK: it is fed parsed chunk objects, so it is tested with plain data.
 */
import { LlmBadResponseError } from '../../core/errors/index.js';
import type { ToolCall } from '../../core/messages.js';
import { ZERO_USAGE, type LlmStreamHandlers, type LlmUsage } from '../../core/ports/llm.js';
import { readChunk, type ChunkChoice } from './read-chunk.js';
import { ToolCallAssembler } from './tool-call-assembler.js';

/** Everything a finished stream said. */
export interface AccumulatedResponse {
  text: string;
  thinking: string;
  toolCalls: ToolCall[];
  /** The provider's `finish_reason`, as sent. */
  rawFinishReason: string;
  /** From the usage chunk; zeros when the endpoint sent none. */
  usage: LlmUsage;
  /** The `model` the chunks named, or null when they named none. */
  model: string | null;
  /** The completion id (`chatcmpl-…`), or null. */
  id: string | null;
}

/**
 * Feed it every chunk with {@link push}, then call {@link finish}. Handlers are called synchronously
 * from `push`, thinking before text within a chunk; an empty delta calls nothing. A throwing handler
 * throws out of `push`: the caller decides what a handler bug means.
 */
export class StreamAccumulator {
  readonly #handlers: LlmStreamHandlers;
  readonly #toolCalls = new ToolCallAssembler();
  #text = '';
  #thinking = '';
  #finishReason: string | null = null;
  #usage: LlmUsage | null = null;
  #model: string | null = null;
  #id: string | null = null;

  constructor(handlers: LlmStreamHandlers = {}) {
    this.#handlers = handlers;
  }

  /** Whether a finish reason has arrived (usage may still follow). */
  get finished(): boolean {
    return this.#finishReason !== null;
  }

  /** Applies one parsed chunk; throws `LlmBadResponseError` when it is not a valid chunk. */
  push(chunk: unknown): void {
    const parsed = readChunk(chunk);
    this.#id ??= parsed.id;
    this.#model ??= parsed.model;
    if (parsed.usage !== null) this.#usage = parsed.usage;
    if (parsed.choice !== null) this.#apply(parsed.choice);
  }

  /**
   * The response. Throws `LlmBadResponseError` when the stream ended without a finish reason — the
   * connection closed early, or the endpoint stopped mid-answer — since what arrived may be a
   * fragment of the answer (retryable: the loop discards it and asks again).
   */
  finish(): AccumulatedResponse {
    if (this.#finishReason === null) {
      throw new LlmBadResponseError('the stream ended without a finish reason', {
        details: { provider: 'openai', textChars: this.#text.length, toolCalls: this.#toolCalls.size },
      });
    }
    return {
      text: this.#text,
      thinking: this.#thinking,
      toolCalls: this.#toolCalls.finish(this.#id === null ? 'call' : `call_${this.#id}`),
      rawFinishReason: this.#finishReason,
      usage: this.#usage ?? { ...ZERO_USAGE },
      model: this.#model,
      id: this.#id,
    };
  }

  #apply(choice: ChunkChoice): void {
    if (choice.reasoning !== '') {
      this.#thinking += choice.reasoning;
      this.#handlers.onThinkingDelta?.(choice.reasoning);
    }
    // A refusal replaces the answer (`content` stays null); it is the text the user should see.
    const text = choice.content + choice.refusal;
    if (text !== '') {
      this.#text += text;
      this.#handlers.onTextDelta?.(text);
    }
    for (const delta of choice.toolCalls) this.#toolCalls.add(delta);
    if (choice.finishReason !== null) this.#finishReason ??= choice.finishReason;
  }
}
