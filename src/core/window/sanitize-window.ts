/**
 * The sanitizer over a session's window, paying for the rows appended since the last round.
 *
 * Why joining is exact. Let the view be P ++ S, where P (the view of a digested prefix) is clean and
 * closed, and S (the messages of the rows after it) starts with a non-tool message. Each tool message
 * belongs to the nearest non-tool message before it, so P's results belong to P's calls and S's to
 * S's, as when each is sanitized alone. If S alone needs no repair, and none of S's call ids is among
 * P's (P alone needs none either, so within each part the ids are non-empty and distinct), no id is
 * renamed; each result sits with its own call in call order, so none is moved, dropped or reordered
 * (S's result ids are S's call ids, or S alone would drop them); P's calls are all answered and only
 * S's last message may keep unanswered calls, as alone. No repair anywhere: the view comes back as is.
 *
 * After a repair-free round the digest is recorded just before the last non-tool row: a prefix of a
 * repair-free view cut before a non-tool message is clean (its ids, owners and orders are the
 * whole's) and closed (only the whole view's last non-tool message may have kept unanswered calls).
 */
import { sanitizeHistory, type SanitizeResult } from '../history/index.js';
import type { Message, StoredMessage } from '../messages.js';
import { boundaryFacts, findDigest, mayHoldCall, recordDigest, type WindowDigest } from './window-digest.js';
import { windowView } from './window-view.js';

/**
 * Exactly `sanitizeHistory(arrangeWindow(window).map((row) => row.message))`, for a window of one
 * session as it evolves (`ctx.window`): when a digest shows the prefix clean and closed, only the rows
 * appended since are sanitized. Records the digest the next round starts from.
 */
export function sanitizeWindow(window: readonly StoredMessage[]): SanitizeResult {
  const base = findDigest(window);
  const view = windowView(window, base);
  const joins = base !== null && view.extended && base.sanitized && suffixJoins(base, window);
  const result = joins ? { messages: view.messages, repairs: [] } : sanitizeHistory(view.messages);
  remember(window, base, view.messages, result.repairs.length === 0);
  return result;
}

/** Whether the rows after the clean, closed prefix of `base` join it with no repair (see the file comment). */
function suffixJoins(base: WindowDigest, window: readonly StoredMessage[]): boolean {
  const suffix = window.slice(base.length).map((row) => row.message);
  if (suffix.length === 0) return true;
  // Implied by the sanitizer of the suffix alone (it would move or drop that result); cheap to see first.
  if (suffix[0]!.role === 'tool') return false;
  for (const message of suffix) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) if (mayHoldCall(base, call.id)) return false;
  }
  return sanitizeHistory(suffix).repairs.length === 0;
}

/**
 * Records this window's digest (see `boundaryFacts`): clean and closed when the view is repair-free
 * and, for a digest of the whole window, the view's last message with calls has all its results.
 */
function remember(window: readonly StoredMessage[], base: WindowDigest | null, view: readonly Message[], repairFree: boolean): void {
  const boundary = boundaryFacts(base, window);
  if (boundary !== null) recordDigest(boundary.facts, repairFree && (!boundary.whole || viewClosed(view)));
}

/**
 * Whether a repair-free view answers every call: its results after the last non-tool message all
 * belong to that message's calls, one each, so there are as many as it has calls.
 */
function viewClosed(view: readonly Message[]): boolean {
  let head = view.length - 1;
  while (head >= 0 && view[head]!.role === 'tool') head -= 1;
  const message = view[head];
  const calls = message?.role === 'assistant' ? (message.toolCalls?.length ?? 0) : 0;
  return view.length - 1 - head === calls;
}
