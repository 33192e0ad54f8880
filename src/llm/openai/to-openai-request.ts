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
 * `max_tokens` with a 400; {@link maxTokensParamFor} picks `max_completion_tokens` for their names.
 */
export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

/**
 * OpenAI's reasoning model families by name: `o1`, `o3`, `o4-mini` … and `gpt-5*`. Matched at the
 * start of the model name as sent, so a router's prefixed name (`openai/o3`) keeps `max_tokens`.
 */
const REASONING_MODEL = /^(?:o\d|gpt-5)/i;

/** The token-cap field for `model` when none is configured: see {@link MaxTokensParam}. */
export function maxTokensParamFor(model: string): MaxTokensParam {
  return REASONING_MODEL.test(model) ? 'max_completion_tokens' : 'max_tokens';
}

/** What {@link toOpenAiRequest} needs besides the request. */
export interface ToOpenAiRequestOptions {
  /** Used when `request.model` is null. */
  defaultModel: string;
  /** Which field carries the token cap; default by the model sent ({@link maxTokensParamFor}). */
  maxTokensParam?: MaxTokensParam;
  /** Send `prompt_cache_key` (the session id). Default true. */
  promptCacheKey?: boolean;
}

/**
 * The streaming request body:
 * - `stream_options.include_usage` so the last chunk carries token usage (without it a streamed
 *   response reports none);
 * - `tools` and `tool_choice` only when there are tools — never `tool_choice: "auto"` alone, which
 *   some compatible endpoints reject; a `null` choice leaves the API default;
 * - `prompt_cache_key`: the session id, so OpenAI routes a session's calls to the same prompt cache
 *   (each call of a session repeats the one before it and adds to it), unless turned off
 *   (`OPENAI_PROMPT_CACHE_KEY=false`, for an endpoint that refuses fields it does not know);
 * - `temperature`, the token cap and `response_format` only when set, so the endpoint's defaults apply.
 */
export function toOpenAiRequest(request: LlmRequest, options: ToOpenAiRequestOptions): ChatCompletionCreateParamsStreaming {
  const model = request.model ?? options.defaultModel;
  const params: ChatCompletionCreateParamsStreaming = {
    model,
    messages: toOpenAiMessages(request.systemPrompt, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (options.promptCacheKey !== false && request.sessionId !== undefined) params.prompt_cache_key = request.sessionId;
  if (request.tools.length > 0) {
    params.tools = request.tools.map(toOpenAiTool);
    if (request.toolChoice !== null) params.tool_choice = request.toolChoice;
  }
  if (request.maxTokens !== null) params[options.maxTokensParam ?? maxTokensParamFor(model)] = request.maxTokens;
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
