/** The Anthropic provider adapter and its pure conversions. */
export { ANTHROPIC_DEFAULT_BASE_URL, AnthropicLlm, type AnthropicLlmOptions } from './anthropic-llm.js';
export {
  ANTHROPIC_ERROR_STATUS,
  AnthropicStreamRejectedError,
  AnthropicStreamTransientError,
  fromStreamErrorEvent,
  isStreamErrorEvent,
  type StreamErrorFields,
} from './anthropic-stream-error.js';
export { cachedSystem, EPHEMERAL, markBlock, MAX_CACHE_BREAKPOINTS, withCachedLastTool } from './cache-breakpoints.js';
export { AnthropicStreamAccumulator, type AnthropicStreamEvent, type StreamAccumulatorOptions } from './from-anthropic-stream.js';
export { mapCallError } from './map-call-error.js';
export { mapStopReason, type MappedStopReason } from './map-stop-reason.js';
export { emptyTally, toLlmUsage, updateTally, type AnthropicUsageFields, type UsageTally } from './map-usage.js';
export { readStreamEvent, type BlockDelta, type BlockStart, type StreamEvent } from './read-stream-event.js';
export { StreamIdleGuard } from './stream-idle-guard.js';
export { structuredOutputInstruction, withStructuredOutput } from './structured-output-instruction.js';
export { imagePlaceholder, textBlocks, toAnthropicContent, toImageBlock, type AnthropicContentBlock } from './to-anthropic-content.js';
export {
  HISTORY_START_MARKER,
  toAnthropicMessages,
  toolInput,
  type AnthropicBlock,
  type AnthropicHistory,
  type AnthropicMessage,
  type ToAnthropicMessagesOptions,
} from './to-anthropic-messages.js';
export { DEFAULT_MAX_TOKENS, toAnthropicRequest, toAnthropicTool } from './to-anthropic-request.js';
export { toAnthropicToolUseId } from './tool-use-id.js';
