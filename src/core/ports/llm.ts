import type { Message, ToolCall } from '../messages.js';
import type { ToolSpec, JsonSchema } from '../tools/tool-types.js';

/** Why the model stopped, unified across providers; the provider's own reason is kept beside it. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'error' | 'other';

/** Structured output request (per agent or per input). */
export interface ResponseFormatSpec {
  name: string;
  schema: JsonSchema;
  strict?: boolean;
  description?: string;
}

export interface LlmRequest {
  /**
   * The session the call serves. Adapters may use it to route the call to the provider's prompt
   * cache (OpenAI's `prompt_cache_key`); it is never sent as content.
   */
  sessionId: string;
  /** Overrides the adapter's default model for this call (per-agent model). */
  model: string | null;
  /** System prompt, kept apart from the history (Anthropic sends it separately). */
  systemPrompt: string | null;
  /** The conversation, already sanitized: protocol-valid for every provider (I4). */
  messages: Message[];
  /**
   * Index in `messages` of the last message of the earlier inputs (the one running excluded), or
   * null when there is none. Everything up to it is the prefix the next calls of the session send
   * again unchanged, so a provider with explicit cache breakpoints (Anthropic's `cache_control`) marks
   * it there. An adapter ignores an index outside `messages` (an `llm.before` hook may shorten them).
   */
  cacheBreakpoint: number | null;
  tools: ToolSpec[];
  /**
   * `auto` only when tools are offered; `null` otherwise (some endpoints reject `auto` without
   * tools). `none` offers the tools but forbids calling them: the round-limit wrap-up call uses it,
   * because Anthropic refuses a history with tool blocks when no tools are defined.
   */
  toolChoice: 'auto' | 'none' | null;
  maxTokens: number | null;
  temperature: number | null;
  responseFormat: ResponseFormatSpec | null;
}

/** Token usage of one LLM call. Missing provider figures are 0. */
export interface LlmUsage {
  /** The whole prompt: uncached, read from the cache and written to it. */
  promptTokens: number;
  completionTokens: number;
  /** Cache read: prompt tokens served from the provider's prompt cache (part of `promptTokens`). */
  cachedTokens: number;
  /** Cache write: prompt tokens written to the provider's prompt cache (part of `promptTokens`; 0 for OpenAI). */
  cacheWriteTokens: number;
  reasoningTokens: number;
  totalTokens: number;
}

export interface LlmResponse {
  text: string;
  /** Reasoning/thinking text where the provider streams it; never sent back as content. */
  thinking: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** The provider's own finish/stop reason, e.g. `end_turn`, `max_tokens`, `stop`. */
  rawFinishReason: string | null;
  usage: LlmUsage;
  /** The model that actually answered (fallback may change it). */
  model: string;
  provider: string;
}

/** A fallback provider took over a call (see `FallbackLlm`). */
export interface LlmFallbackInfo {
  /** `provider:model` that failed. */
  from: string;
  /** `provider:model` that serves the call now. */
  to: string;
  /** Why: `non_retryable` (e.g. 401, 404) or `unavailable` (repeated 429/5xx/connection errors). */
  reason: 'non_retryable' | 'unavailable';
  errorMessage: string;
}

/** Callbacks for streamed output; called in order, before `complete` resolves. */
export interface LlmStreamHandlers {
  onTextDelta?(text: string): void;
  onThinkingDelta?(text: string): void;
  /** Called when a fallback provider takes over; text streamed before it must be dropped. */
  onFallback?(info: LlmFallbackInfo): void;
}

export interface LlmCallOptions {
  /** Aborts the request mid-stream (cancel, interrupt, lease loss, shutdown, deadline). */
  signal: AbortSignal;
  handlers?: LlmStreamHandlers;
}

/**
 * The LLM port. One attempt per call: adapters do not retry (the loop's policy does), and throw
 * errors that carry an HTTP `status`/`headers` where there is one so the policy can classify them.
 */
export interface Llm {
  readonly provider: string;
  readonly model: string;
  complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse>;
}

export const ZERO_USAGE: LlmUsage = Object.freeze({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  totalTokens: 0,
});
