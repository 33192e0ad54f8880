/**
 * One parsed `chat.completion.chunk`, checked and reduced to what the accumulator uses. Pure.
 *
 * The SDK parses each SSE line as JSON but does not check its shape; an endpoint that sends a
 * `content` number or a `tool_calls` object would otherwise surface as a TypeError deep in the
 * accumulator. Fields that carry the answer are checked strictly (a wrong type is
 * `LlmBadResponseError`); optional extras that compatible endpoints shape differently (reasoning,
 * refusal, usage details) are read when they have the expected type and ignored otherwise.
 */
import { LlmBadResponseError } from '../../core/errors/index.js';
import type { LlmUsage } from '../../core/ports/llm.js';

/** One tool-call fragment as it arrived; every field may be missing. */
export interface ToolCallDelta {
  index?: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/** What the first choice of a chunk contributes. Empty strings where the chunk had nothing. */
export interface ChunkChoice {
  content: string;
  /** `delta.reasoning_content` (DeepSeek, Qwen, vLLM) or `delta.reasoning` (OpenRouter, Ollama). */
  reasoning: string;
  refusal: string;
  toolCalls: ToolCallDelta[];
  finishReason: string | null;
}

/** A checked chunk. */
export interface ParsedChunk {
  id: string | null;
  model: string | null;
  usage: LlmUsage | null;
  /** The choice with index 0 (only one is ever asked for), or null when the chunk has none. */
  choice: ChunkChoice | null;
}

type Json = Record<string, unknown>;

/** Checks one chunk; throws `LlmBadResponseError` when it is not a chunk. */
export function readChunk(value: unknown): ParsedChunk {
  if (!isObject(value)) throw badChunk('a chunk is not a JSON object');
  const choices = value.choices ?? [];
  if (!Array.isArray(choices)) throw badChunk('`choices` is not an array');
  const first: unknown = choices.find((choice) => !isObject(choice) || choice.index === undefined || choice.index === 0);
  return {
    id: typeof value.id === 'string' ? value.id : null,
    model: typeof value.model === 'string' && value.model !== '' ? value.model : null,
    usage: isObject(value.usage) ? readUsage(value.usage) : null,
    choice: first === undefined ? null : readChoice(first),
  };
}

function readChoice(choice: unknown): ChunkChoice {
  if (!isObject(choice)) throw badChunk('a choice is not an object');
  const delta = choice.delta ?? {};
  if (!isObject(delta)) throw badChunk('`delta` is not an object');
  // Some compatible servers send "" on every chunk before the last: that is no finish reason yet.
  const finishReason = choice.finish_reason === '' ? null : (choice.finish_reason ?? null);
  if (finishReason !== null && typeof finishReason !== 'string') throw badChunk('`finish_reason` is not a string');
  const content = delta.content ?? '';
  if (typeof content !== 'string') throw badChunk('`delta.content` is not a string');
  const toolCalls = delta.tool_calls ?? [];
  if (!Array.isArray(toolCalls)) throw badChunk('`delta.tool_calls` is not an array');
  return {
    content,
    reasoning: optionalString(delta.reasoning_content) || optionalString(delta.reasoning),
    refusal: optionalString(delta.refusal),
    toolCalls: toolCalls.map((call) => readToolCallDelta(call)),
    finishReason,
  };
}

function readToolCallDelta(call: unknown): ToolCallDelta {
  if (!isObject(call)) throw badChunk('a tool call delta is not an object');
  const fn = call.function ?? {};
  if (!isObject(fn)) throw badChunk('`tool_calls[].function` is not an object');
  const delta: ToolCallDelta = {};
  const index = call.index ?? undefined;
  if (index !== undefined) {
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) throw badChunk('`tool_calls[].index` is not an index');
    delta.index = index;
  }
  const id = stringField(call.id, '`tool_calls[].id`');
  const name = stringField(fn.name, '`tool_calls[].function.name`');
  const args = stringField(fn.arguments, '`tool_calls[].function.arguments`');
  if (id !== '') delta.id = id;
  if (name !== '') delta.name = name;
  if (args !== '') delta.arguments = args;
  return delta;
}

/**
 * Usage from the last chunk. `prompt_tokens_details.cached_tokens` and
 * `completion_tokens_details.reasoning_tokens` are OpenAI's; endpoints without them report 0.
 * OpenAI caches prompts by itself and reports no cache write: `cacheWriteTokens` is 0.
 */
export function readUsage(usage: Json): LlmUsage {
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  const promptDetails = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completionDetails = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  return {
    promptTokens,
    completionTokens,
    cachedTokens: count(promptDetails.cached_tokens),
    cacheWriteTokens: 0,
    reasoningTokens: count(completionDetails.reasoning_tokens),
    totalTokens: usage.total_tokens === undefined || usage.total_tokens === null ? promptTokens + completionTokens : count(usage.total_tokens),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function optionalString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function stringField(value: unknown, what: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw badChunk(`${what} is not a string`);
  return value;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The chunk itself is left out of the error: it may hold model output, and error details reach logs
 * and events, where message contents are redacted by default.
 */
function badChunk(problem: string): LlmBadResponseError {
  return new LlmBadResponseError(`malformed chat.completion.chunk: ${problem}`, { details: { provider: 'openai', problem } });
}
