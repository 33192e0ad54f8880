/**
 * Whether a tool call id is already used in the window, asked for the few ids of one model reply: the
 * digest's record of where each id first appeared rules most of them out of the prefix, the rows
 * appended since are checked directly, and only an id that may be in the prefix costs a walk of it
 * (a provider that reuses `call_0` every turn).
 */
import type { StoredMessage } from '../messages.js';
import { findDigest, mayHoldCall } from './window-digest.js';

/** Membership in the set of tool call ids of the window's assistant rows (every row, whatever its state). */
export function windowCallIds(window: readonly StoredMessage[]): Pick<ReadonlySet<string>, 'has'> {
  const base = findDigest(window);
  const recent = callIdsOf(window, base?.length ?? 0, window.length);
  if (base === null) return recent;
  let prefix: Set<string> | null = null;
  return {
    has(id) {
      if (recent.has(id)) return true;
      if (!mayHoldCall(base, id)) return false;
      prefix ??= callIdsOf(window, 0, base.length);
      return prefix.has(id);
    },
  };
}

/**
 * Whether the window holds a compact note, i.e. history was folded and the folded calls' ids are out
 * of sight: the digest says for the prefix, and only the rows appended since are looked at.
 */
export function windowHasFold(window: readonly StoredMessage[]): boolean {
  const base = findDigest(window);
  if (base?.hasNote === true) return true;
  for (let index = base?.length ?? 0; index < window.length; index += 1) if (window[index]!.kind === 'compact_note') return true;
  return false;
}

function callIdsOf(window: readonly StoredMessage[], from: number, to: number): Set<string> {
  const ids = new Set<string>();
  for (let index = from; index < to; index += 1) {
    const { message } = window[index]!;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) ids.add(call.id);
  }
  return ids;
}
