import { contentText, type MessageContent, type StoredMessage, type ToolCall } from '../../core/messages.js';
import type { InputRecord } from '../../core/session-types.js';
import { assistantMessageId } from './ui-message-chunks.js';

/** A tool part of an assistant message (`tool-<name>`), as the AI SDK's `ToolUIPart` spells it. */
export type UiToolPart =
  | { type: `tool-${string}`; toolCallId: string; state: 'input-available'; input: unknown }
  | { type: `tool-${string}`; toolCallId: string; state: 'output-available'; input: unknown; output: unknown }
  | { type: `tool-${string}`; toolCallId: string; state: 'output-error'; input: unknown; errorText: string };

/** The parts this module writes: the subset of the SDK's `UIMessagePart` a loopfleet history holds. */
export type UiMessagePart =
  | { type: 'step-start' }
  | { type: 'text'; text: string; state: 'done' }
  | UiToolPart;

/** A chat message in the AI SDK's `UIMessage` shape. */
export interface UiMessage {
  id: string;
  role: 'user' | 'assistant';
  parts: UiMessagePart[];
}

/** Statuses whose answer is still being written: its assistant message comes by resuming the stream. */
const UNFINISHED = new Set(['pending', 'running', 'waiting']);

function textOfInput(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return contentText(value as MessageContent);
  if (value !== null && typeof value === 'object' && 'content' in value) return textOfInput((value as { content: unknown }).content);
  return null;
}

function parseArguments(call: ToolCall): unknown {
  try {
    return JSON.parse(call.arguments) as unknown;
  } catch {
    return call.arguments;
  }
}

/**
 * Builds a chat's messages from a session's history: per input, in seq order, the user's message
 * (id = the input's `inputId`, the id the client sent) and, once the input is over, one assistant
 * message (id `<sessionId>:<seq>`) with a `step-start` per round, its text and its tool parts.
 * Inputs without a user text (timers, answers to questions) add no user message.
 */
export function historyToUiMessages(sessionId: string, messages: readonly StoredMessage[], inputs: readonly InputRecord[]): UiMessage[] {
  const byInput = new Map<number, StoredMessage[]>();
  for (const stored of messages) {
    if (stored.inputSeq === null) continue;
    const list = byInput.get(stored.inputSeq) ?? [];
    list.push(stored);
    byInput.set(stored.inputSeq, list);
  }
  const out: UiMessage[] = [];
  for (const input of [...inputs].sort((a, b) => a.seq - b.seq)) {
    const text = input.kind === 'send' ? textOfInput(input.payload.input) : null;
    if (text !== null) out.push({ id: input.inputId, role: 'user', parts: [{ type: 'text', text, state: 'done' }] });
    if (UNFINISHED.has(input.status)) continue;
    const parts = assistantParts(byInput.get(input.seq) ?? []);
    if (parts.length > 0) out.push({ id: assistantMessageId(sessionId, input.seq), role: 'assistant', parts });
  }
  return out;
}

function assistantParts(stored: readonly StoredMessage[]): UiMessagePart[] {
  const parts: UiMessagePart[] = [];
  const tools = new Map<string, number>();
  let round: number | null | undefined;
  for (const { message, round: messageRound } of [...stored].sort((a, b) => a.seq - b.seq)) {
    if (message.role === 'assistant') {
      if (messageRound !== round) parts.push({ type: 'step-start' });
      round = messageRound;
      const text = contentText(message.content);
      if (text !== '') parts.push({ type: 'text', text, state: 'done' });
      for (const call of message.toolCalls ?? []) {
        tools.set(call.id, parts.length);
        parts.push({ type: `tool-${call.name}`, toolCallId: call.id, state: 'input-available', input: parseArguments(call) });
      }
    } else if (message.role === 'tool') {
      const index = tools.get(message.toolCallId);
      if (index === undefined) continue;
      const call = parts[index] as UiToolPart;
      const output = contentText(message.content);
      parts[index] = message.isError === true
        ? { type: call.type, toolCallId: call.toolCallId, state: 'output-error', input: call.input, errorText: output }
        : { type: call.type, toolCallId: call.toolCallId, state: 'output-available', input: call.input, output };
    }
  }
  return parts;
}
