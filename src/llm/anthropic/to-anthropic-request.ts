/**
 * An `LlmRequest` → the parameters of one streaming `messages.create` call.
 */
import type { MessageCreateParamsStreaming, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { LlmRequest } from '../../core/ports/llm.js';
import type { ToolSpec } from '../../core/tools/tool-types.js';
import { cachedSystem, withCachedLastTool } from './cache-breakpoints.js';
import { withStructuredOutput } from './structured-output-instruction.js';
import { toAnthropicMessages } from './to-anthropic-messages.js';

/** `max_tokens` is required by Anthropic; used when the request sets no limit. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * Builds the parameters:
 * - `model`: the request's, else `defaultModel`;
 * - `system`: the system prompt, internal system messages and the structured-output instruction
 *   (see `structured-output-instruction.ts`), left out when empty;
 * - `max_tokens`: the request's, else {@link DEFAULT_MAX_TOKENS};
 * - no `temperature`, even when the request sets one: API version 2026-10-21, which SDK v1 sends
 *   (`anthropic-version`), refuses `temperature`, `top_p` and `top_k` with a 400 — even at their
 *   default values — and the SDK's parameter types no longer have them. Sending it would fail every
 *   call of the session with a non-retryable error;
 * - `tools` and `tool_choice` only when tools are offered: `auto` or `none` as asked, nothing when
 *   the request leaves it open (Anthropic's default is `auto`). Without tools, earlier tool calls
 *   in the history are sent as text, since Anthropic refuses tool blocks without tool definitions;
 * - prompt-cache breakpoints (`cache-breakpoints.ts`) on the last tool, the system prompt (sent as one
 *   text block for that) and the last message of the earlier inputs: three at most.
 */
export function toAnthropicRequest(request: LlmRequest, defaultModel: string): MessageCreateParamsStreaming {
  const hasTools = request.tools.length > 0;
  const { system, messages } = toAnthropicMessages(request.messages, {
    systemPrompt: withStructuredOutput(request.systemPrompt, request.responseFormat),
    toolBlocks: hasTools ? 'native' : 'text',
    cacheBreakpoint: request.cacheBreakpoint,
  });
  const params: MessageCreateParamsStreaming = {
    model: request.model ?? defaultModel,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages,
    stream: true,
  };
  if (system !== null) params.system = cachedSystem(system);
  if (hasTools) {
    params.tools = withCachedLastTool(request.tools.map(toAnthropicTool));
    if (request.toolChoice !== null) params.tool_choice = { type: request.toolChoice };
  }
  return params;
}

/** A tool definition as Anthropic wants it; the schema's `type` is always `object` there. */
export function toAnthropicTool(spec: ToolSpec): Tool {
  return { name: spec.name, description: spec.description, input_schema: Object.assign({}, spec.parameters, { type: 'object' as const }) };
}
