/**
 * The internal history → Anthropic's `{ system, messages }` (docs/llm-providers.md).
 *
 * The Messages API is stricter than the internal history, which follows OpenAI's shape:
 * - there is no system role inside the conversation: the system prompt and every internal `system`
 *   message are joined into the top-level `system`;
 * - turns alternate `user`/`assistant`, the first one is a user turn, and no turn is empty;
 * - tool calls are `tool_use` blocks in the assistant turn, and their results are `tool_result`
 *   blocks in the ONE user turn that follows it, before any text in that turn. A notice or a
 *   steering message the loop appended after the results (never between them) therefore lands
 *   in that same user turn, after the `tool_result` blocks.
 * The input is expected to be sanitized already (`sanitizeHistory`): every call answered, results
 * next to their call. Pure: the input is never mutated. The end of the earlier inputs gets a
 * `cache_control` breakpoint when asked (`cacheBreakpoint`, see `cache-breakpoints.ts`).
 */
import type { ImageBlockParam, TextBlockParam, ToolResultBlockParam, ToolUseBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { contentText, type AssistantMessage, type Message, type ToolMessage } from '../../core/messages.js';
import { markBlock } from './cache-breakpoints.js';
import { toAnthropicContent } from './to-anthropic-content.js';
import { toAnthropicToolUseId } from './tool-use-id.js';

/** A block this conversion produces. */
export type AnthropicBlock = TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam;

/** One turn of the conversation; `content` is never empty. */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/** The converted history. */
export interface AnthropicHistory {
  /** The system prompt and internal system messages, joined by blank lines; null when there are none. */
  system: string | null;
  /** Alternating turns, starting with a user turn. */
  messages: AnthropicMessage[];
}

/** Options of {@link toAnthropicMessages}. */
export interface ToAnthropicMessagesOptions {
  /** The request's system prompt; it comes before any internal system message. */
  systemPrompt: string | null;
  /**
   * `native` (default): tool calls and results as `tool_use`/`tool_result` blocks. `text`: as plain
   * text — for a request that offers no tools, because Anthropic refuses tool blocks in a request
   * without tool definitions (for example an input whose tools allowlist is empty, in a session
   * that used tools before).
   */
  toolBlocks?: 'native' | 'text';
  /**
   * Index in `messages` of the last message of the earlier inputs (`LlmRequest.cacheBreakpoint`): the
   * last block the history holds once that message is converted gets a `cache_control` breakpoint.
   * Null or absent (or out of range): no breakpoint in the messages.
   */
  cacheBreakpoint?: number | null;
}

/**
 * The user turn put first when the history would otherwise start with an assistant turn. The loop
 * already places the compact note (a user message) first after a fold, so this only guards against
 * a window that lost its leading user message; a neutral marker is safer than moving or inventing
 * content, and it tells the model that earlier turns are not shown.
 */
export const HISTORY_START_MARKER = '[Earlier conversation omitted.]';

/** Converts a history; see the module comment for the rules it enforces. */
export function toAnthropicMessages(messages: readonly Message[], options: ToAnthropicMessagesOptions): AnthropicHistory {
  const mode = options.toolBlocks ?? 'native';
  const systemParts = [options.systemPrompt ?? ''];
  const turns: AnthropicMessage[] = [];
  let cacheEnd: AnthropicBlock | null = null;
  for (const [index, message] of messages.entries()) {
    if (message.role === 'system') systemParts.push(message.content);
    else appendTurn(turns, toTurn(message, mode));
    if (index === options.cacheBreakpoint) cacheEnd = turns.at(-1)?.content.at(-1) ?? null;
  }
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ type: 'text', text: HISTORY_START_MARKER }] });
  for (const turn of turns) if (turn.role === 'user') putToolResultsFirst(turn);
  trimFinalAssistantText(turns);
  markBlock(turns, cacheEnd);
  const system = systemParts.filter((part) => part.trim() !== '').join('\n\n');
  return { system: system === '' ? null : system, messages: turns };
}

function toTurn(message: Exclude<Message, { role: 'system' }>, mode: 'native' | 'text'): AnthropicMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: toAnthropicContent(message.content) };
    case 'assistant':
      return { role: 'assistant', content: assistantBlocks(message, mode) };
    case 'tool':
      return { role: 'user', content: [toolResultBlock(message, mode)] };
  }
}

/** Adds a turn, merging it into the previous one of the same role; empty turns are dropped. */
function appendTurn(turns: AnthropicMessage[], turn: AnthropicMessage): void {
  if (turn.content.length === 0) return;
  const last = turns.at(-1);
  if (last !== undefined && last.role === turn.role) last.content.push(...turn.content);
  else turns.push(turn);
}

/**
 * A history that ends with an assistant turn (a bare `resume` after a reply) is sent as a prefill,
 * and Anthropic refuses one whose last text ends in whitespace (400 "final assistant content cannot
 * end with trailing whitespace") — on every later call too, as the history does not change. The last
 * text block of that turn loses its trailing whitespace; a block (and then a turn) left empty is
 * dropped, so the request stays valid even though blank text blocks are not produced today.
 */
function trimFinalAssistantText(turns: AnthropicMessage[]): void {
  const last = turns.at(-1);
  const block = last?.content.at(-1);
  if (last?.role !== 'assistant' || block?.type !== 'text') return;
  const text = block.text.trimEnd();
  if (text !== '') last.content[last.content.length - 1] = Object.assign({}, block, { text });
  else last.content.pop();
  if (last.content.length === 0) turns.pop();
}

/**
 * Anthropic wants the `tool_result` blocks of a user turn before anything else in it. A sanitized
 * history already has them there; the stable partition makes it hold whatever the merge produced.
 */
function putToolResultsFirst(turn: AnthropicMessage): void {
  const results = turn.content.filter((block) => block.type === 'tool_result');
  if (results.length === 0 || results.length === turn.content.length) return;
  turn.content = [...results, ...turn.content.filter((block) => block.type !== 'tool_result')];
}

/** Text first (blank text left out), then one `tool_use` block per call, in call order. */
function assistantBlocks(message: AssistantMessage, mode: 'native' | 'text'): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = toAnthropicContent(message.content, { images: false });
  for (const call of message.toolCalls ?? []) {
    if (mode === 'text') {
      blocks.push({ type: 'text', text: `[called tool ${call.name} with ${call.arguments.trim() === '' ? '{}' : call.arguments}]` });
    } else {
      blocks.push({ type: 'tool_use', id: toAnthropicToolUseId(call.id), name: call.name, input: toolInput(call.arguments) });
    }
  }
  return blocks;
}

/**
 * The parsed arguments object. Arguments that do not parse to an object become `{}`: the loop has
 * already answered such a call with an invalid-arguments result, and the API requires an object.
 * They are never repaired: a half-repaired call could look like a real one.
 */
export function toolInput(argumentsJson: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * A tool result. Its content is text, or text and image blocks (a tool may return a screenshot);
 * blank content is left out, which the API allows for `tool_result`.
 */
function toolResultBlock(message: ToolMessage, mode: 'native' | 'text'): AnthropicBlock {
  if (mode === 'text') {
    const status = message.isError === true ? ' (error)' : '';
    return { type: 'text', text: `[result of tool ${message.name}${status}]\n${contentText(message.content)}` };
  }
  const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: toAnthropicToolUseId(message.toolCallId) };
  if (typeof message.content === 'string') {
    if (message.content.trim() !== '') block.content = message.content;
  } else {
    const parts = toAnthropicContent(message.content);
    if (parts.length > 0) block.content = parts;
  }
  if (message.isError === true) block.is_error = true;
  return block;
}
