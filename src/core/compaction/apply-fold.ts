/**
 * Where the compact note goes in what the model sees: right after the leading system messages, before
 * the first kept turn — it summarises everything earlier, so it must read as the start of the
 * conversation. The store appends the note with a new (high) seq, so a window loaded in seq order has
 * it last; {@link arrangeWindow} puts it back in its logical place (position by
 * meaning, not by seq).
 */
import type { Message, StoredMessage } from '../messages.js';
import type { FoldPlan } from './plan-fold.js';

/**
 * The messages the model sees after `plan` is carried out with `note`: the active window minus the
 * folded rows, in order, with the note inserted before the first non-system message.
 */
export function applyFold(window: readonly StoredMessage[], plan: FoldPlan, note: Message): Message[] {
  const folded = new Set(plan.foldSeqs);
  const kept = window.filter((row) => row.state === 'active' && !folded.has(row.seq)).map((row) => row.message);
  return insertAfterLeadingSystem(kept, [note]);
}

/**
 * The active rows of a loaded window in the order the model must see them: compact notes moved to
 * just after the leading system messages, everything else in seq order.
 */
export function arrangeWindow(window: readonly StoredMessage[]): StoredMessage[] {
  const active = [...window].filter((row) => row.state === 'active').sort((a, b) => a.seq - b.seq);
  const notes = active.filter((row) => row.kind === 'compact_note');
  if (notes.length === 0) return active;
  const rest = active.filter((row) => row.kind !== 'compact_note');
  const at = firstNonSystemIndex(rest.map((row) => row.message));
  return [...rest.slice(0, at), ...notes, ...rest.slice(at)];
}

function insertAfterLeadingSystem(messages: readonly Message[], inserted: readonly Message[]): Message[] {
  const at = firstNonSystemIndex(messages);
  return [...messages.slice(0, at), ...inserted, ...messages.slice(at)];
}

function firstNonSystemIndex(messages: readonly Message[]): number {
  const index = messages.findIndex((message) => message.role !== 'system');
  return index === -1 ? messages.length : index;
}
