/** The OpenAI Chat Completions provider: the adapter and its pure conversions. */
export { OpenAiLlm, OPENAI_DEFAULT_BASE_URL, type OpenAiLlmOptions } from './openai-llm.js';
export { toOpenAiMessages, toOpenAiMessage, TOOL_IMAGE_PLACEHOLDER } from './to-openai-messages.js';
export { toOpenAiRequest, toOpenAiTool, type MaxTokensParam, type ToOpenAiRequestOptions } from './to-openai-request.js';
export { StreamAccumulator, type AccumulatedResponse } from './stream-accumulator.js';
export { mapFinishReason } from './map-finish-reason.js';
export { toLlmError, type FailedCall } from './to-llm-error.js';
