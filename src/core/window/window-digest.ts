/**
 * Prefix digests of a session's active window: a few facts about `window[0, k)` kept from one LLM
 * round to the next, so that what a round costs (the model's view, the sanitizer, the compaction
 * estimate) grows with the rows appended since the last round or run, not with the window — a
 * session may keep 10,000 messages active, and every round used to walk them all several times.
 *
 * Recognising a prefix. A digest is kept under the last row of its prefix, in a WeakMap keyed by the
 * row object (so it lives exactly as long as that row), together with the prefix's length and first
 * row. A session's window changes only by appends, each with a seq above every seq already used, and
 * by folds, which remove rows; rows and their messages are never mutated (the store's window cache
 * even hands the same frozen rows to later runs). Once a row is in the window, then, rows below it
 * can only ever leave, never join: two windows of the session that hold the same row at index k − 1
 * hold the same k − 1 rows below it, so the digest's prefix is theirs (the first row is compared too,
 * a cheap guard). A window that does not evolve this way (a hand-made array) must use the plain
 * functions instead.
 *
 * Every digest's prefix has only active rows in non-decreasing seq order, which is what lets the
 * model's view of a longer window be built from it (see {@link viewExtends}).
 */
import { estimateMessageTokens } from '../budget/index.js';
import type { StoredMessage } from '../messages.js';

/** What a digest knows of its prefix `window[0, length)`, apart from the sanitizer. */
export interface PrefixFacts {
  /** Rows in the prefix; at least 1. */
  readonly length: number;
  /** `window[0]`. */
  readonly first: StoredMessage;
  /** `window[length - 1]`: the row the digest is kept under, with the prefix's highest seq. */
  readonly last: StoredMessage;
  /** A `compact_note` row is in the prefix (the model's view moves it forward). */
  readonly hasNote: boolean;
  /**
   * A row that is neither a note nor a system message is in the prefix, so the place the view gives
   * notes — after the leading system messages — lies inside it and appended rows cannot move it.
   */
  readonly hasTurn: boolean;
  /** `estimateMessagesTokens` of the prefix's messages. */
  readonly tokens: number;
  /**
   * For each tool call id of a row digested in this lineage, the lowest seq of such a row. Shared by
   * the digests of a lineage and only ever added to, so it serves one purpose: to prove that an id
   * is NOT in this prefix (see {@link mayHoldCall}). Ids of rows digested after this prefix are in it
   * too, but above `last.seq`, so they do not make later rows look like the prefix's.
   */
  readonly callSeqs: Map<string, number>;
}

/** A prefix's facts and what the sanitizer proved about it. */
export interface WindowDigest extends PrefixFacts {
  /**
   * The prefix's view is clean and closed: `sanitizeHistory` of it alone repairs nothing, and every
   * tool call in it is answered inside it. False when that could not be shown.
   */
  readonly sanitized: boolean;
}

const digests = new WeakMap<StoredMessage, WindowDigest>();

/**
 * The digest of the longest recorded prefix of `window`, or null. Looks back from the end, so the
 * cost is the number of rows appended since the digest was recorded (the whole window only when
 * there is none, when the caller's full computation costs more anyway).
 */
export function findDigest(window: readonly StoredMessage[]): WindowDigest | null {
  const first = window[0];
  for (let index = window.length - 1; index >= 0; index -= 1) {
    const digest = digests.get(window[index]!);
    if (digest !== undefined && digest.length === index + 1 && digest.first === first) return digest;
  }
  return null;
}

/**
 * The facts of `window[0, to)`, from `base` (the facts of a shorter prefix of this window) plus the
 * rows after it, or from scratch when `base` is null or longer. Null when a row is not active or its
 * seq is below the one before: such a prefix gets no digest. May add to `base.callSeqs`.
 */
export function extendFacts(base: PrefixFacts | null, window: readonly StoredMessage[], to: number): PrefixFacts | null {
  const first = window[0];
  if (first === undefined || to < 1 || to > window.length) return null;
  const start = base !== null && base.length <= to ? base : null;
  let hasNote = start?.hasNote ?? false;
  let hasTurn = start?.hasTurn ?? false;
  let tokens = start?.tokens ?? 0;
  let previous = start?.last.seq ?? Number.NEGATIVE_INFINITY;
  const callSeqs = start?.callSeqs ?? new Map<string, number>();
  for (let index = start?.length ?? 0; index < to; index += 1) {
    const row = window[index]!;
    if (row.state !== 'active' || row.seq < previous) return null;
    previous = row.seq;
    const { message } = row;
    if (row.kind === 'compact_note') hasNote = true;
    else if (message.role !== 'system') hasTurn = true;
    tokens += estimateMessageTokens(message);
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) noteCallSeq(callSeqs, call.id, row.seq);
  }
  return { length: to, first, last: window[to - 1]!, hasNote, hasTurn, tokens, callSeqs };
}

function noteCallSeq(callSeqs: Map<string, number>, id: string, seq: number): void {
  const seen = callSeqs.get(id);
  if (seen === undefined || seq < seen) callSeqs.set(id, seq);
}

/**
 * False when no row of the prefix has a tool call with `id`: every row of the prefix was digested
 * with its seq, which is at most `last.seq`, so an id first seen above that (or never) is not in it.
 */
export function mayHoldCall(facts: PrefixFacts, id: string): boolean {
  const seq = facts.callSeqs.get(id);
  return seq !== undefined && seq <= facts.last.seq;
}

/**
 * Whether the model's view of `window` (`arrangeWindow`) is the view of the prefix `facts` describes
 * followed by the rows after it, as they are. True when those rows are active, keep seqs in
 * non-decreasing order and hold no compact note, and the prefix either holds no note or holds the
 * notes' place: the whole window is then active and in seq order (the stable sort keeps it), its notes
 * are the prefix's, and they go after the same leading system messages.
 */
export function viewExtends(facts: PrefixFacts, window: readonly StoredMessage[]): boolean {
  if (facts.length === window.length) return true;
  if (facts.hasNote && !facts.hasTurn) return false;
  let previous = facts.last.seq;
  for (let index = facts.length; index < window.length; index += 1) {
    const row = window[index]!;
    if (row.state !== 'active' || row.seq < previous || row.kind === 'compact_note') return false;
    previous = row.seq;
  }
  return true;
}

/**
 * The facts a window's digest is recorded with: of the prefix before the last non-tool row when the
 * rows from there on extend that prefix's view (the usual case; the row before it is also one a later
 * run gets again from the store's cache), else of the whole window (`whole`). Null when the window
 * can have no digest.
 */
export function boundaryFacts(base: PrefixFacts | null, window: readonly StoredMessage[]): { facts: PrefixFacts; whole: boolean } | null {
  let lastNonTool = window.length - 1;
  while (lastNonTool >= 0 && window[lastNonTool]!.message.role === 'tool') lastNonTool -= 1;
  let facts: PrefixFacts | null = null;
  if (lastNonTool > 0 && (base === null || base.length <= lastNonTool)) {
    facts = extendFacts(base, window, lastNonTool);
    if (facts !== null && viewExtends(facts, window)) return { facts, whole: false };
  }
  facts = extendFacts(facts ?? base, window, window.length);
  return facts === null ? null : { facts, whole: true };
}

/** Keeps `facts` with the sanitizer's verdict under the prefix's last row. */
export function recordDigest(facts: PrefixFacts, sanitized: boolean): void {
  digests.set(facts.last, Object.assign({}, facts, { sanitized }));
}
