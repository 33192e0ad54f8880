/**
 * The always-on history sanitizer (power-loop's `align_tool_calls`): run on the
 * messages of every LLM request so that one corrupt or half-written row can never brick a session —
 * both providers answer a protocol violation with a 400, forever, until the history changes.
 *
 * It repairs only the view sent to the model. The stored rows (and the tool ledger, keyed by the
 * original call ids) are untouched; the repairs are returned so the caller can log them.
 */
import type { AssistantMessage, Message, ToolCall, ToolMessage } from '../messages.js';

/** The result content of a call that was asked for but never answered mid-history. */
export const INTERRUPTED_TOOL_RESULT = '[no result: the tool call was interrupted]';

/**
 * One change the sanitizer made. `index` / `assistantIndex` are positions in the input array.
 * - `orphan_result_dropped`: a tool result no call in the history made.
 * - `duplicate_result_dropped`: a further result for a call already answered (the first is kept).
 * - `result_moved`: a result found away from its call (after another message, or before the call)
 *   was moved next to it — the real result is worth more to the model than a placeholder.
 * - `results_reordered`: an assistant's results were put back in call order.
 * - `placeholder_inserted`: a mid-history call without result got {@link INTERRUPTED_TOOL_RESULT}.
 * - `call_id_renamed`: an empty or repeated tool call id got a fresh one (Anthropic rejects
 *   duplicate `tool_use` ids); results that sit with that call follow the new id.
 */
export type Repair =
  | { kind: 'orphan_result_dropped'; index: number; toolCallId: string }
  | { kind: 'duplicate_result_dropped'; index: number; toolCallId: string }
  | { kind: 'result_moved'; index: number; toolCallId: string; assistantIndex: number }
  | { kind: 'results_reordered'; assistantIndex: number }
  | { kind: 'placeholder_inserted'; assistantIndex: number; toolCallId: string }
  | { kind: 'call_id_renamed'; assistantIndex: number; from: string; to: string };

/** The sanitized messages and what was changed to get them. */
export interface SanitizeResult {
  messages: Message[];
  repairs: Repair[];
}

/** One call of an assistant message and the result assigned to it. */
interface CallSlot {
  call: ToolCall;
  /** The id sent to the model: the call's own id unless it was empty or repeated. */
  finalId: string;
  result: { index: number; message: ToolMessage } | null;
}

/** An assistant message with tool calls, at `index`. */
interface Block {
  index: number;
  slots: CallSlot[];
}

/** What the passes below share. */
interface Scan {
  blocks: Map<number, Block>;
  /** For each tool message index: the index of the non-tool message it follows (-1 if none). */
  owner: Map<number, number>;
  lastNonToolIndex: number;
}

/**
 * Realigns tool calls and results so the history satisfies I4 (see `protocolViolations`), except that
 * a trailing assistant's unanswered calls are left alone: the loop is about to answer them. Pure: the
 * input array and its messages are never mutated; untouched messages are returned by reference, and a
 * healthy history comes back with the same contents and no repairs.
 */
export function sanitizeHistory(messages: readonly Message[]): SanitizeResult {
  const repairs: Repair[] = [];
  const scan = scanHistory(messages);
  assignFinalIds(messages, scan, repairs);
  const leftOver = assignOwnResults(messages, scan);
  relocateResults(leftOver, messages, scan, repairs);
  return { messages: emit(messages, scan, repairs), repairs };
}

function scanHistory(messages: readonly Message[]): Scan {
  const blocks = new Map<number, Block>();
  const owner = new Map<number, number>();
  let head = -1;
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      owner.set(index, head);
      return;
    }
    head = index;
    const calls = message.role === 'assistant' ? (message.toolCalls ?? []) : [];
    if (calls.length > 0) {
      blocks.set(index, { index, slots: calls.map((call) => ({ call, finalId: call.id, result: null })) });
    }
  });
  return { blocks, owner, lastNonToolIndex: head };
}

/** Gives every empty or already-used call id a fresh one that appears nowhere in the history. */
function assignFinalIds(messages: readonly Message[], scan: Scan, repairs: Repair[]): void {
  const taken = new Set<string>();
  for (const message of messages) {
    if (message.role === 'tool') taken.add(message.toolCallId);
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) taken.add(call.id);
  }
  const used = new Set<string>();
  for (const block of scan.blocks.values()) {
    for (const slot of block.slots) {
      if (slot.call.id === '' || used.has(slot.call.id)) {
        slot.finalId = freshId(slot.call.id === '' ? 'call' : slot.call.id, taken);
        repairs.push({ kind: 'call_id_renamed', assistantIndex: block.index, from: slot.call.id, to: slot.finalId });
      }
      used.add(slot.finalId);
    }
  }
}

function freshId(base: string, taken: Set<string>): string {
  let n = 2;
  while (taken.has(`${base}_${n}`)) n += 1;
  const id = `${base}_${n}`;
  taken.add(id);
  return id;
}

/** First pass: results that sit right after their own call's assistant. Returns the others. */
function assignOwnResults(messages: readonly Message[], scan: Scan): number[] {
  const leftOver: number[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'tool') return;
    const block = scan.blocks.get(scan.owner.get(index) ?? -1);
    const slot = block?.slots.find((s) => s.call.id === message.toolCallId && s.result === null);
    if (slot === undefined) leftOver.push(index);
    else slot.result = { index, message };
  });
  return leftOver;
}

/**
 * Second pass, after every well-placed result is assigned (so a stray copy can never take a call's
 * place from the result sitting with it): move a stray result to the earliest unanswered call with
 * its id anywhere in the history, or drop it as a duplicate or an orphan.
 */
function relocateResults(leftOver: number[], messages: readonly Message[], scan: Scan, repairs: Repair[]): void {
  if (leftOver.length === 0) return;
  const callsById = new Map<string, { block: Block; slot: CallSlot }[]>();
  for (const block of scan.blocks.values()) {
    for (const slot of block.slots) {
      const list = callsById.get(slot.call.id) ?? [];
      list.push({ block, slot });
      callsById.set(slot.call.id, list);
    }
  }
  for (const index of leftOver) {
    const message = messages[index] as ToolMessage;
    const id = message.toolCallId;
    const candidates = callsById.get(id);
    const target = candidates?.find((candidate) => candidate.slot.result === null);
    if (target !== undefined) {
      target.slot.result = { index, message };
      repairs.push({ kind: 'result_moved', index, toolCallId: id, assistantIndex: target.block.index });
    } else {
      const kind = candidates === undefined ? 'orphan_result_dropped' : 'duplicate_result_dropped';
      repairs.push({ kind, index, toolCallId: id });
    }
  }
}

/** Builds the output: every non-tool message in place, each assistant followed by its results. */
function emit(messages: readonly Message[], scan: Scan, repairs: Repair[]): Message[] {
  const out: Message[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'tool') return;
    const block = scan.blocks.get(index);
    if (block === undefined) {
      out.push(message);
      return;
    }
    out.push(withFinalIds(message as AssistantMessage, block));
    if (isReordered(block, scan)) repairs.push({ kind: 'results_reordered', assistantIndex: index });
    for (const slot of block.slots) {
      if (slot.result !== null) out.push(withCallId(slot.result.message, slot.finalId));
      else if (index !== scan.lastNonToolIndex) {
        out.push(placeholderResult(slot));
        repairs.push({ kind: 'placeholder_inserted', assistantIndex: index, toolCallId: slot.finalId });
      }
    }
  });
  return out;
}

/** True when results that sat with their call were not in call order (moved ones are reported apart). */
function isReordered(block: Block, scan: Scan): boolean {
  let last = -1;
  for (const slot of block.slots) {
    const result = slot.result;
    if (result === null || scan.owner.get(result.index) !== block.index) continue;
    if (result.index < last) return true;
    last = result.index;
  }
  return false;
}

function withFinalIds(message: AssistantMessage, block: Block): AssistantMessage {
  if (block.slots.every((slot) => slot.finalId === slot.call.id)) return message;
  return Object.assign({}, message, { toolCalls: block.slots.map((slot) => Object.assign({}, slot.call, { id: slot.finalId })) });
}

function withCallId(message: ToolMessage, id: string): ToolMessage {
  return message.toolCallId === id ? message : Object.assign({}, message, { toolCallId: id });
}

function placeholderResult(slot: CallSlot): ToolMessage {
  return { role: 'tool', toolCallId: slot.finalId, name: slot.call.name, content: INTERRUPTED_TOOL_RESULT, isError: true };
}
