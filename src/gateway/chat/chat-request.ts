import { InputInvalidError } from '../../core/errors/index.js';

/** What `POST /v1/chat` takes from the AI SDK transport's body. */
export interface ChatRequest {
  sessionId: string;
  /** The last user message's id: the input's idempotency key. */
  inputId: string;
  /** Its text parts, joined. */
  text: string;
}

interface BodyMessage {
  id?: unknown;
  role?: unknown;
  parts?: unknown;
}

/**
 * Reads `DefaultChatTransport`'s body (`{ id, messages, trigger, messageId }`): the chat id is the
 * session id and the last `user` message is the input. Throws `input.invalid` for a regenerate
 * (not supported: a session's history is append-only), or no user message with text.
 */
export function parseChatRequest(body: { id: string; messages: unknown[]; trigger?: string }): ChatRequest {
  if (body.trigger === 'regenerate-message') {
    throw new InputInvalidError('trigger regenerate-message is not supported: send a new user message instead', { details: { trigger: body.trigger } });
  }
  const last = [...body.messages].reverse().find((m): m is BodyMessage => typeof m === 'object' && m !== null && (m as BodyMessage).role === 'user');
  if (last === undefined) throw new InputInvalidError('messages holds no user message');
  if (typeof last.id !== 'string' || last.id === '') throw new InputInvalidError('the last user message has no id');
  const parts = Array.isArray(last.parts) ? (last.parts as unknown[]) : [];
  const text = parts
    .filter((p): p is { type: 'text'; text: string } => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string')
    .map((p) => p.text)
    .join('');
  if (text === '') throw new InputInvalidError('the last user message has no text part');
  return { sessionId: body.id, inputId: last.id, text };
}
