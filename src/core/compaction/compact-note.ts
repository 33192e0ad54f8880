/**
 * The compact note: the one message that stands for every folded part of the history.
 *
 * It is a `user` message wrapping the summary in `<compact_note>` tags, not a `system` message as in
 * power-loop: Anthropic's Messages API has no system role inside the conversation (only the separate
 * top-level system prompt), and OpenAI accepts a user message anywhere. A user message placed first
 * is valid for both providers, so the note never needs provider-specific handling. The tags tell the
 * model (and a later summarizer) that this is a summary of earlier turns, not something the user just
 * said. Where it sits: right after the leading system messages (see `apply-fold.ts`). It is stored with
 * kind `compact_note`, which is how the loop and the next fold recognise it.
 */
import type { Message, UserMessage } from '../messages.js';
import { contentText } from '../messages.js';

/** Opening tag of the compact note envelope. */
export const COMPACT_NOTE_OPEN = '<compact_note>';
/** Closing tag of the compact note envelope. */
export const COMPACT_NOTE_CLOSE = '</compact_note>';

/**
 * The note message for `summary`. A closing tag inside the summary is defused, so a summary that
 * quotes the tag cannot end the envelope early.
 */
export function compactNoteMessage(summary: string): UserMessage {
  const body = summary.trim().split(COMPACT_NOTE_CLOSE).join('<\\/compact_note>');
  return { role: 'user', content: `${COMPACT_NOTE_OPEN}\n${body}\n${COMPACT_NOTE_CLOSE}` };
}

/** The summary inside a compact note message, or null when `message` is not one. */
export function compactNoteSummary(message: Message): string | null {
  if (message.role !== 'user') return null;
  const text = contentText(message.content).trim();
  if (!text.startsWith(COMPACT_NOTE_OPEN) || !text.endsWith(COMPACT_NOTE_CLOSE)) return null;
  return text.slice(COMPACT_NOTE_OPEN.length, text.length - COMPACT_NOTE_CLOSE.length).trim();
}
