import { InputInvalidError } from '../../core/errors/index.js';
import type { LoadHistoryOptions } from '../../core/ports/session-store.js';
import { assertFlag } from '../postgres/arguments.js';

/** Largest page `loadHistory` / `SessionQueue.history` return when asked for one (`limit`). */
export const MAX_HISTORY_PAGE = 10_000;

/** {@link LoadHistoryOptions} checked, with defaults: `limit` null reads every message after `afterSeq`. */
export interface HistoryPage {
  includeCompacted: boolean;
  afterSeq: number;
  limit: number | null;
}

/**
 * Checks history options once, before any database work, for the Postgres store, the in-memory fake
 * and `SessionQueue.history` alike: anything malformed is `input.invalid`, never a driver error.
 */
export function resolveHistoryOptions(options: unknown): HistoryPage {
  if (options === undefined) return { includeCompacted: false, afterSeq: 0, limit: null };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InputInvalidError('history options must be an object');
  const { includeCompacted, afterSeq = 0, limit } = options as LoadHistoryOptions;
  if (typeof afterSeq !== 'number' || !Number.isSafeInteger(afterSeq) || afterSeq < 0) {
    throw new InputInvalidError('afterSeq must be a non-negative integer (a message seq)', { details: { received: String(afterSeq) } });
  }
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE)) {
    throw new InputInvalidError(`limit must be an integer from 1 to ${MAX_HISTORY_PAGE}`, { details: { received: String(limit) } });
  }
  return { includeCompacted: assertFlag(includeCompacted, 'includeCompacted'), afterSeq, limit: limit ?? null };
}
