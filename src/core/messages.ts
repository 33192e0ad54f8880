/**
 * The one internal message type. Provider adapters convert to and from it; the store
 * persists it; the loop only ever sees this.
 *
 * Glossary
 * - session: a durable conversation, identified by a session id; its history lives in Postgres.
 * - input: one thing handed to a session (`send`, `resume`, `timer`), numbered by a per-session `seq`.
 * - run: the processing of one input, from `input_started` to `input_finished`.
 * - round: one LLM call plus the tool calls it asked for.
 * - lease: a worker's time-limited right to run a session's inputs.
 * - fence: the lease token every state-changing write carries; a stale one is rejected (`lease.lost`).
 */
import { z } from 'zod';

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  /** An https URL or a `data:` URL. */
  url: string;
  mediaType?: string;
}

export type ContentPart = TextPart | ImagePart;

/** Plain text, or structured parts (multimodal). Persisted as JSON and decoded on load. */
export type MessageContent = string | ContentPart[];

/** A tool call as the model asked for it. `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: MessageContent;
  name?: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: MessageContent;
  toolCalls?: ToolCall[];
}

export interface ToolMessage {
  role: 'tool';
  content: MessageContent;
  toolCallId: string;
  name: string;
  isError?: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** What a message row is for, beyond its role. */
export type MessageKind = 'message' | 'compact_note' | 'notice' | 'degraded' | 'synthetic_tool_result';

/** A message as persisted: its per-session `seq`, the input and round that produced it. */
export interface StoredMessage {
  seq: number;
  inputSeq: number | null;
  round: number | null;
  kind: MessageKind;
  state: 'active' | 'compacted';
  message: Message;
  createdAt: Date;
}

export const contentPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), url: z.string().min(1), mediaType: z.string().optional() }),
]);

export const messageContentSchema = z.union([z.string(), z.array(contentPartSchema)]);

export const toolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

/** Validates persisted or external messages: persisted state is untrusted on load. */
export const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: messageContentSchema, name: z.string().optional() }),
  z.object({
    role: z.literal('assistant'),
    content: messageContentSchema,
    toolCalls: z.array(toolCallSchema).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    content: messageContentSchema,
    toolCallId: z.string().min(1),
    name: z.string(),
    isError: z.boolean().optional(),
  }),
]);

export const MESSAGE_KINDS = ['message', 'compact_note', 'notice', 'degraded', 'synthetic_tool_result'] as const;

/** The text of a message's content, with non-text parts left out. */
export function contentText(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('');
}
