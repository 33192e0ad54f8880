/**
 * An `LlmRequest` as the body of a streaming Chat Completions call. Pure.
 */
import type { ChatCompletionCreateParamsStreaming, ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { LlmRequest, ResponseFormatSpec } from '../../core/ports/llm.js';
import type { ToolSpec } from '../../core/tools/tool-types.js';
import { toOpenAiMessages } from './to-openai-messages.js';

/**
 * Which body field carries the output token cap.
 *
 * `max_tokens` is the default because every OpenAI-compatible server (vLLM, Ollama, llama.cpp,
 * DashScope, DeepSeek, Groq, OpenRouter, Azure) understands it, while several of them ignore or reject
 * the newer `max_completion_tokens`. OpenAI's own reasoning models (o-series, gpt-5) refuse
 * `max_tokens`; pointing the adapter at them needs `max_completion_tokens`.
 */
export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

/** What {@link toOpenAiRequest} needs besides the request. */
export interface ToOpenAiRequestOptions {
  /** Used when `request.model` is null. */
  defaultModel: string;
  /** Default `max_tokens`; see {@link MaxTokensParam}. */
  maxTokensParam?: MaxTokensParam;
}

/**
 * The streaming request body:
 * - `stream_options.include_usage` so the last chunk carries token usage (without it a streamed
 *   response reports none);
 * - `tools` and `tool_choice` only when there are tools — never `tool_choice: "auto"` alone, which
 *   some compatible endpoints reject (power-loop edge case 7); a `null` choice leaves the API default;
 * - `temperature`, the token cap and `response_format` only when set, so the endpoint's defaults apply.
 */
export function toOpenAiRequest(request: LlmRequest, options: ToOpenAiRequestOptions): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model ?? options.defaultModel,
    messages: toOpenAiMessages(request.systemPrompt, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    params.tools = request.tools.map(toOpenAiTool);
    if (request.toolChoice !== null) params.tool_choice = request.toolChoice;
  }
  if (request.maxTokens !== null) params[options.maxTokensParam ?? 'max_tokens'] = request.maxTokens;
  if (request.temperature !== null) params.temperature = request.temperature;
  if (request.responseFormat !== null) params.response_format = toResponseFormat(request.responseFormat);
  return params;
}

/** A tool as a Chat Completions function tool. */
export function toOpenAiTool(tool: ToolSpec): ChatCompletionFunctionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** Structured output as `json_schema`; `strict` defaults to true, as the structured-output spec says. */
function toResponseFormat(spec: ResponseFormatSpec): NonNullable<ChatCompletionCreateParamsStreaming['response_format']> {
  const jsonSchema = { name: spec.name, schema: spec.schema, strict: spec.strict ?? true };
  return {
    type: 'json_schema',
    json_schema: spec.description === undefined ? jsonSchema : Object.assign({}, jsonSchema, { description: spec.description }),
  };
}
