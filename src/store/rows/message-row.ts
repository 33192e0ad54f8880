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
  // Literals per role rather than `{ ...base, … }`: Node 20's V8 runs a spread followed by more
  // properties on a slow path, and every message of every step is encoded here.
  const { role, content } = message;
  switch (message.role) {
    case 'system':
      return { inputSeq, round, role, kind, content, isError: false };
    case 'user':
      return message.name === undefined ? { inputSeq, round, role, kind, content, isError: false } : { inputSeq, round, role, kind, content, isError: false, name: message.name };
    case 'assistant':
      return message.toolCalls === undefined
        ? { inputSeq, round, role, kind, content, isError: false }
        : { inputSeq, round, role, kind, content, isError: false, toolCalls: message.toolCalls };
    case 'tool':
      return { inputSeq, round, role, kind, content, toolCallId: message.toolCallId, name: message.name, isError: message.isError === true };
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
  const { role, content } = r;
  switch (r.role) {
    case 'user':
      return r.name === null ? { role, content } : { role, content, name: r.name };
    case 'assistant':
      return r.toolCalls === null ? { role, content } : { role, content, toolCalls: r.toolCalls };
    case 'tool':
      return r.isError ? { role, content, toolCallId: r.toolCallId, name: r.name, isError: true } : { role, content, toolCallId: r.toolCallId, name: r.name };
    default:
      return { role, content };
  }
}
