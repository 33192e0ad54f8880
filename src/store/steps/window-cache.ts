import type { StoredMessage } from '../../core/messages.js';

/** Limits of a {@link WindowCache}. */
export interface WindowCacheOptions {
  /** Estimated bytes all cached windows may hold together; 0 turns the cache off. Default 64 MiB. */
  maxBytes?: number;
  /** Windows with fewer active messages are not kept (read whole every run). Default 1: every window. */
  minMessages?: number;
}

export const DEFAULT_WINDOW_CACHE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_WINDOW_CACHE_MIN_MESSAGES = 1;

/** What a run-state read sends for a cached window: its epoch and the highest seq held. */
export interface CachedWindowKey {
  windowEpoch: number;
  throughSeq: number;
}

/** A window as read at some moment, tagged with the session's epoch then. Never mutated. */
export interface CachedWindow extends CachedWindowKey {
  readonly rows: readonly StoredMessage[];
  readonly bytes: number;
}

/**
 * A stored row's footprint: its objects (the row, its message, its date, its strings' headers) plus a
 * byte per character of its text and calls; and what each cached window adds (its entry, its array).
 * Measured on V8 with a scratch heap count (bench/history/log-to-session-30.md, item 54): 30,000 windows of 4 short rows
 * to 100 windows of 2,000 long ones. Text outside Latin-1 takes two bytes a character and is counted
 * as one, so such windows can take up to twice their text's share.
 */
const ROW_OVERHEAD_BYTES = 330;
const WINDOW_OVERHEAD_BYTES = 310;

/**
 * The active windows of the sessions a worker ran lately, so that the next run of a session reads
 * only the rows appended since (docs/store.md, "The window cache"). An entry is a
 * window exactly as read at some moment, tagged with the session's `window_epoch` then: messages are
 * only ever appended above every existing seq, or leave the window in a fold that takes a new epoch
 * (and a session created again under an old id starts from a new epoch too), so while the epoch is
 * unchanged the window now is the entry plus the active rows above its highest seq. The read that
 * checks the epoch and fetches those rows is one statement, so both come from one snapshot.
 *
 * Entries are filled from reads only, never from the worker's own commits, so an ambiguous commit (a
 * connection lost on COMMIT) can never leave a cached window that differs from the table. Rows in it
 * are frozen: they are handed to every later run of the session. Least recently used entries go first
 * when the estimated size passes `maxBytes`.
 */
export class WindowCache {
  private readonly entries = new Map<string, CachedWindow>();
  private readonly maxBytes: number;
  private readonly minMessages: number;
  private bytes = 0;

  constructor(options: WindowCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_WINDOW_CACHE_BYTES;
    this.minMessages = options.minMessages ?? DEFAULT_WINDOW_CACHE_MIN_MESSAGES;
  }

  /** The window held for `sessionId`, or null. Read with its key, then {@link merge} the answer into it. */
  lookup(sessionId: string): CachedWindow | null {
    return this.entries.get(sessionId) ?? null;
  }

  /**
   * The window after a read sent with `sent` (the value {@link lookup} gave) returned `windowEpoch`
   * and `rows`: the rows of `sent` followed by `rows` when the epoch is still the one sent (the read
   * returned only the rows above its seq), else `rows` alone (the read returned the whole window).
   * Keeps the result when it is long enough and fits, as the most recently used. Returns an array
   * the caller owns. `sent` itself is never changed, so reads of one session that overlap (which a
   * lease rules out anyway) each get their own exact window.
   */
  merge(sessionId: string, sent: CachedWindow | null, windowEpoch: number, rows: StoredMessage[]): StoredMessage[] {
    const extended = sent !== null && windowEpoch === sent.windowEpoch;
    const window = extended ? sent.rows.concat(rows) : rows;
    this.drop(sessionId);
    const last = window.at(-1);
    // Not kept: `window` is already the caller's (fresh rows, or a new array from concat).
    if (this.maxBytes === 0 || window.length < this.minMessages || last === undefined) return window;
    let bytes = extended ? sent.bytes : WINDOW_OVERHEAD_BYTES;
    for (const row of extended ? rows : window) bytes += rowBytes(row);
    if (bytes > this.maxBytes) return window;
    for (const row of extended ? rows : window) deepFreeze(row);
    this.entries.set(sessionId, { windowEpoch, throughSeq: last.seq, rows: window, bytes });
    this.bytes += bytes;
    for (const [id, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= old.bytes;
    }
    return window.slice();
  }

  /** Forgets a session's window (the session is gone, or a newer read replaces it). */
  drop(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (entry === undefined) return;
    this.entries.delete(sessionId);
    this.bytes -= entry.bytes;
  }

  /** Sessions and estimated bytes held (for tests and the bench). */
  size(): { sessions: number; bytes: number } {
    return { sessions: this.entries.size, bytes: this.bytes };
  }
}

function rowBytes(row: StoredMessage): number {
  const { message } = row;
  let chars = 0;
  if (typeof message.content === 'string') chars += message.content.length;
  else for (const part of message.content) chars += part.type === 'text' ? part.text.length : part.url.length;
  if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.id.length + call.name.length + call.arguments.length;
  if (message.role === 'tool') chars += message.toolCallId.length;
  return ROW_OVERHEAD_BYTES + chars;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}
