import { z } from 'zod';
import { MESSAGE_KINDS, messageSchema, type Message, type StoredMessage } from '../../core/messages.js';
import { parseRow } from './parse-row.js';

/** The `messages` columns a stored message is rebuilt from. */
export const MESSAGE_COLUMNS = `seq, input_seq AS "inputSeq", round, role, kind, content, tool_calls AS "toolCalls",
  tool_call_id AS "toolCallId", name, is_error AS "isError", state, created_at AS "createdAt"`;

/** One message flattened into the `messages` columns, as sent to the append statement. */
export interface MessageColumns {
  inputSeq: number | null;
  round: number | null;
  role: Message['role'];
  kind: string;
  content: unknown;
  toolCalls?: unknown;
  toolCallId?: string;
  name?: string;
  isError: boolean;
}

const rowSchema = z.object({
  seq: z.number().int().positive(),
  inputSeq: z.number().int().positive().nullable(),
  round: z.number().int().nonnegative().nullable(),
  role: z.string(),
  kind: z.enum(MESSAGE_KINDS),
  content: z.unknown(),
  toolCalls: z.unknown(),
  toolCallId: z.string().nullable(),
  name: z.string().nullable(),
  isError: z.boolean(),
  state: z.enum(['active', 'compacted']),
  createdAt: z.date(),
});

/** Flattens a message into columns. Role-specific fields go to their own columns. */
export function encodeMessage(message: Message, kind: string, inputSeq: number | null, round: number | null): MessageColumns {
  const base = { inputSeq, round, role: message.role, kind, content: message.content, isError: false };
  switch (message.role) {
    case 'system':
      return base;
    case 'user':
      return message.name === undefined ? base : { ...base, name: message.name };
    case 'assistant':
      return message.toolCalls === undefined ? base : { ...base, toolCalls: message.toolCalls };
    case 'tool':
      return { ...base, toolCallId: message.toolCallId, name: message.name, isError: message.isError === true };
  }
}

/**
 * Rebuilds a stored message from its row and validates it against the one message type; a row with
 * an unknown role or a content shape the loop does not understand is `state.corrupt`.
 */
export function decodeMessage(sessionId: string, row: unknown): StoredMessage {
  const what = `message ${sessionId}#${String((row as { seq?: unknown } | null)?.seq)}`;
  const r = parseRow(rowSchema, row, what);
  const message = parseRow(messageSchema, assemble(r), what);
  return {
    seq: r.seq,
    inputSeq: r.inputSeq,
    round: r.round,
    kind: r.kind,
    state: r.state,
    message,
    createdAt: r.createdAt,
  };
}

function assemble(r: z.infer<typeof rowSchema>): Record<string, unknown> {
  const base = { role: r.role, content: r.content };
  switch (r.role) {
    case 'user':
      return r.name === null ? base : { ...base, name: r.name };
    case 'assistant':
      return r.toolCalls === null ? base : { ...base, toolCalls: r.toolCalls };
    case 'tool':
      return { ...base, toolCallId: r.toolCallId, name: r.name, ...(r.isError ? { isError: true } : {}) };
    default:
      return base;
  }
}
