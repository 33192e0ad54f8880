/**
 * The model's view of a window — `arrangeWindow(window).map((row) => row.message)` — built without
 * the filter and sort when a digest shows the window is active and in seq order up to the rows
 * appended since: then the view is the rows' messages as they are, with any compact note moved
 * after the leading system messages.
 */
import { arrangeWindow } from '../compaction/index.js';
import type { Message, StoredMessage } from '../messages.js';
import { findDigest, viewExtends, type WindowDigest } from './window-digest.js';

/** The model's view of a window, and whether it was built from a digest of the window's prefix. */
export interface WindowView {
  messages: Message[];
  /**
   * True when it was: `messages` is then the view of the digest's prefix followed by the messages of
   * the rows after it, in window order (see `viewExtends`).
   */
  extended: boolean;
}

/** Exactly `arrangeWindow(window).map((row) => row.message)`, for a window of one session as it evolves. */
export function arrangedWindowMessages(window: readonly StoredMessage[]): Message[] {
  return windowView(window, findDigest(window)).messages;
}

/** The view of `window`, through `base` (a digest of its prefix, or null) when the window extends it. */
export function windowView(window: readonly StoredMessage[], base: WindowDigest | null): WindowView {
  if (base === null || !viewExtends(base, window)) return { messages: arrangeWindow(window).map((row) => row.message), extended: false };
  return { messages: base.hasNote ? notesForward(window) : window.map((row) => row.message), extended: true };
}

/** `arrangeWindow` of a window whose rows are all active and in seq order: notes after the leading system messages. */
function notesForward(window: readonly StoredMessage[]): Message[] {
  const notes: Message[] = [];
  const rest: Message[] = [];
  for (const row of window) (row.kind === 'compact_note' ? notes : rest).push(row.message);
  const at = rest.findIndex((message) => message.role !== 'system');
  rest.splice(at === -1 ? rest.length : at, 0, ...notes);
  return rest;
}
