/**
 * The compaction check of every round, without walking the window: the estimate of a window is its
 * digested prefix's plus the rows appended since, and a window under the trigger needs nothing else.
 */
import { estimateMessageTokens } from '../budget/index.js';
import { foldTriggerTokens, planFold, type FoldOptions, type FoldPlan } from '../compaction/index.js';
import type { StoredMessage } from '../messages.js';
import { boundaryFacts, findDigest, recordDigest, type PrefixFacts } from './window-digest.js';

/**
 * Exactly `estimateMessagesTokens` of the window's active messages, for a window of one session as it
 * evolves. A window with no digest yet (read afresh, or just folded) gets one, not yet vouched for by
 * the sanitizer, so that the round's request does not estimate every message again.
 */
export function windowTokens(window: readonly StoredMessage[]): number {
  let base: PrefixFacts | null = findDigest(window);
  if (base === null) {
    base = boundaryFacts(null, window)?.facts ?? null;
    if (base !== null) recordDigest(base, false);
  }
  let tokens = base?.tokens ?? 0;
  for (let index = base?.length ?? 0; index < window.length; index += 1) {
    const row = window[index]!;
    if (row.state === 'active') tokens += estimateMessageTokens(row.message);
  }
  return tokens;
}

/**
 * Exactly `planFold(window, options)`, for a window of one session as it evolves: null at once when
 * the estimate is under the trigger (the usual round), the full plan otherwise.
 */
export function planWindowFold(window: readonly StoredMessage[], options: FoldOptions): FoldPlan | null {
  const trigger = foldTriggerTokens(options);
  if (windowTokens(window) < trigger) return null;
  return planFold(window, options);
}
