/**
 * The internal history (the one internal message type) as Chat Completions messages. Pure.
 *
 * The loop hands over a history that is already protocol-valid (I4, docs/invariants.md: each assistant's
 * calls are answered by tool messages right after it), so this is a shape conversion, message for
 * message, never a reordering: compact notes, notices and steering messages are plain user messages
 * and stay where they are.
 */
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
  ChatCompletionUserMessageParam,
} from 'openai/resources/chat/completions';
import { contentText, type AssistantMessage, type ContentPart, type Message, type MessageContent, type ToolMessage, type UserMessage } from '../../core/messages.js';

/**
 * Stands in for an image inside a tool result: Chat Completions tool messages carry text only. The
 * URL is left out on purpose — a `data:` URL would put the whole image into the prompt as text.
 */
export const TOOL_IMAGE_PLACEHOLDER = '[image omitted: tool results can only carry text in this API]';

/**
 * Converts the system prompt and the history. The system prompt, when there is one, becomes the first
 * message; `system` messages inside the history are kept where they are (Chat Completions accepts a
 * system message anywhere).
 */
export function toOpenAiMessages(systemPrompt: string | null, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const converted: ChatCompletionMessageParam[] = [];
  if (systemPrompt !== null && systemPrompt !== '') converted.push({ role: 'system', content: systemPrompt });
  for (const message of messages) converted.push(toOpenAiMessage(message));
  return converted;
}

/** One internal message as one Chat Completions message. */
export function toOpenAiMessage(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return toUserMessage(message);
    case 'assistant':
      return toAssistantMessage(message);
    case 'tool':
      return toToolMessage(message);
  }
}

function toUserMessage(message: UserMessage): ChatCompletionUserMessageParam {
  const content = typeof message.content === 'string' ? message.content : message.content.map(toUserPart);
  const name = message.name === undefined ? '' : toOpenAiName(message.name);
  return name === '' ? { role: 'user', content } : { role: 'user', content, name };
}

/** Longest `name` OpenAI accepts. */
const MAX_NAME_LENGTH = 64;

/**
 * A participant name as OpenAI accepts it: `^[a-zA-Z0-9_-]{1,64}$`, or the whole request is a 400 —
 * and one stored message with such a name would fail every later call of the session. Every other
 * character (code point) becomes `_` (`Jane Doe` → `Jane_Doe`) and the result is cut to 64; `''` (the
 * message goes without a name) when none of the name's own letters, digits, `_` or `-` is left
 * (`李雷` would be `__`, which names no one). Only the wire form changes: the stored message keeps it.
 */
export function toOpenAiName(name: string): string {
  const marked = name.replace(/[^a-zA-Z0-9_-]/gu, '\u0000').slice(0, MAX_NAME_LENGTH);
  return /[a-zA-Z0-9_-]/.test(marked) ? marked.replaceAll('\u0000', '_') : '';
}

function toUserPart(part: ContentPart): ChatCompletionContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  return { type: 'image_url', image_url: { url: part.url } };
}

/**
 * An assistant turn. With tool calls and no text, `content` is `null` rather than `""`: that is how
 * OpenAI itself returns such a turn, and some OpenAI-compatible endpoints reject an empty string there.
 */
function toAssistantMessage(message: AssistantMessage): ChatCompletionAssistantMessageParam {
  const text = contentText(message.content);
  const calls = message.toolCalls ?? [];
  if (calls.length === 0) return { role: 'assistant', content: text };
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
  };
}

/**
 * A tool result. A failed call (`isError`) is sent as plain content too: the API has no error flag,
 * and the content already says what went wrong: a failed tool is data.
 */
function toToolMessage(message: ToolMessage): ChatCompletionToolMessageParam {
  return { role: 'tool', tool_call_id: message.toolCallId, content: toolResultText(message.content) };
}

function toolResultText(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : TOOL_IMAGE_PLACEHOLDER)).join('');
}
