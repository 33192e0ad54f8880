import { InputInvalidError } from '../core/errors/index.js';

/**
 * Redis stream ids (`<ms>-<seq>`) as cursors (I7). Ids are compared numerically, part by
 * part: as strings `"9-0"` would sort after `"10-0"`.
 */

const STREAM_ID = /^\d{1,20}(-\d{1,20})?$/;

/** Redis keeps each part of an id in 64 bits: a larger part is refused by every stream command. */
const MAX_ID_PART = 2n ** 64n - 1n;

/** The cursor that means "from the very beginning of the stream". */
export const FROM_START = '0';

/** The cursor that means "only events published after subscribing". */
export const ONLY_NEW = '$';

/**
 * Whether `value` is a concrete stream id (`1700000000000-3`, or a bare millisecond part) that Redis
 * accepts: each part at most 2^64 - 1.
 */
export function isStreamId(value: string): boolean {
  // A number would pass the pattern (`test` turns it into text) and then fail below as a TypeError.
  if (typeof value !== 'string' || !STREAM_ID.test(value)) return false;
  const [ms, seq] = splitId(value);
  return ms <= MAX_ID_PART && seq <= MAX_ID_PART;
}

/** Whether `id` is the start of every stream (`0` or `0-0`): reading after it reads everything. */
export function isStreamStart(id: string): boolean {
  return id === '0' || id === '0-0';
}

/**
 * Checks a subscriber's cursor: a stream id or `$`. Throws `input.invalid` otherwise, before any
 * Redis call, because Redis would reject it with a less helpful message.
 */
export function assertCursor(cursor: string, options: { allowOnlyNew: boolean }): void {
  if (cursor === ONLY_NEW && options.allowOnlyNew) return;
  if (isStreamId(cursor)) return;
  const expected = options.allowOnlyNew
    ? "a stream id such as '1700000000000-0', '0' or '$'"
    : "a stream id such as '1700000000000-0' or '0'";
  throw new InputInvalidError(`invalid event stream cursor ${JSON.stringify(cursor)}: expected ${expected}`, {
    details: { cursor },
  });
}

/** Orders two concrete stream ids: negative when `a` is older, 0 when equal, positive when newer. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = splitId(a);
  const [bMs, bSeq] = splitId(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq !== bSeq) return aSeq < bSeq ? -1 : 1;
  return 0;
}

function splitId(id: string): [bigint, bigint] {
  const dash = id.indexOf('-');
  if (dash === -1) return [BigInt(id), 0n];
  return [BigInt(id.slice(0, dash)), BigInt(id.slice(dash + 1))];
}
