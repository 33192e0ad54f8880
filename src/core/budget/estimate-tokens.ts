/**
 * A cheap, provider-independent token estimate of a history: what the compaction
 * trigger compares against the context budget before every LLM call. It only has to be stable and
 * roughly right — real usage comes back from the provider after the call — and it must cost nothing
 * (no tokenizer download, no per-model tables).
 */
import type { Message, MessageContent } from '../messages.js';

/** Characters per token, the usual rule of thumb for English text and code. */
export const CHARS_PER_TOKEN = 4;

/** Per-message framing the providers add (role markers, separators), in tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * An image counts as a fixed number of tokens, whatever its URL: a base64 `data:` URL is megabytes of
 * characters the model never reads as text, so counting them would trigger compaction on every image.
 */
export const IMAGE_TOKENS = 256;

/** `ceil(chars / 4)` tokens of text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * One message: overhead + (content text + JSON of its tool calls + name + tool call id) / 4, plus a
 * fixed amount per image. The tool call id is counted too: the providers send it back with every
 * result, and an estimate that undercounts is the one that overflows the context.
 */
export function estimateMessageTokens(message: Message): number {
  const { chars, images } = contentSize(message.content);
  let extraChars = 0;
  if (message.role === 'assistant' && message.toolCalls !== undefined && message.toolCalls.length > 0) {
    extraChars += JSON.stringify(message.toolCalls).length;
  }
  if ((message.role === 'user' || message.role === 'tool') && message.name !== undefined) extraChars += message.name.length;
  if (message.role === 'tool') extraChars += message.toolCallId.length;
  return MESSAGE_OVERHEAD_TOKENS + Math.ceil((chars + extraChars) / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}

/** The sum of {@link estimateMessageTokens} over `messages`. */
export function estimateMessagesTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}

function contentSize(content: MessageContent): { chars: number; images: number } {
  if (typeof content === 'string') return { chars: content.length, images: 0 };
  let chars = 0;
  let images = 0;
  for (const part of content) {
    if (part.type === 'text') chars += part.text.length;
    else images += 1;
  }
  return { chars, images };
}
