/**
 * I4 (docs/invariants.md) as a checker: is this history one that both OpenAI and Anthropic accept?
 * Both reject a request whose tool calls and tool results do not pair up,
 * so the loop asserts this after sanitizing and the tests assert it after every transformation.
 */
import { InternalError } from '../errors/index.js';
import type { Message } from '../messages.js';

/** Options of {@link protocolViolations}. */
export interface ProtocolCheckOptions {
  /**
   * Accept a final assistant message whose calls are not all answered yet. True while the loop is
   * between asking for tools and appending their results (the calls are about to be answered); false
   * for a history about to be sent to a model. Default false.
   */
  allowTrailingPending?: boolean;
}

/** The calls of the assistant message whose results we are reading, and how far we got. */
interface OpenBlock {
  index: number;
  ids: string[];
  answered: Set<string>;
  /** Position (in `ids`) of the last result seen; results must only move forward. */
  lastPosition: number;
}

/**
 * Every way `messages` breaks the tool-call protocol, as human-readable strings (empty when valid):
 * - every tool call id is non-empty and unique across the history;
 * - the results of an assistant's calls follow it directly, one per call, in call order, before any
 *   other non-tool message;
 * - no tool result without its call (an orphan), and no second result for one call;
 * - a trailing assistant with unanswered calls only when `allowTrailingPending` is set.
 */
export function protocolViolations(messages: readonly Message[], options: ProtocolCheckOptions = {}): string[] {
  const violations: string[] = [];
  const seenCallIds = new Set<string>();
  let open: OpenBlock | null = null;

  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      checkToolResult(message.toolCallId, index, open, violations);
      continue;
    }
    if (open !== null) reportUnanswered(open, `before message ${index} (${message.role})`, violations);
    open = null;
    const calls = message.role === 'assistant' ? (message.toolCalls ?? []) : [];
    if (calls.length === 0) continue;
    for (const call of calls) {
      if (call.id === '') violations.push(`message ${index} (assistant): a tool call has an empty id`);
      else if (seenCallIds.has(call.id)) violations.push(`message ${index} (assistant): duplicate tool call id "${call.id}"`);
      seenCallIds.add(call.id);
    }
    open = { index, ids: calls.map((call) => call.id), answered: new Set(), lastPosition: -1 };
  }

  if (open !== null && options.allowTrailingPending !== true) {
    reportUnanswered(open, 'at the end of the history', violations);
  }
  return violations;
}

function checkToolResult(id: string, index: number, open: OpenBlock | null, violations: string[]): void {
  const position = open === null ? -1 : open.ids.indexOf(id);
  if (open === null || position === -1) {
    violations.push(`message ${index} (tool): orphan result for "${id}", which no call of the preceding assistant message made`);
    return;
  }
  if (open.answered.has(id)) {
    violations.push(`message ${index} (tool): second result for "${id}" (assistant message ${open.index})`);
    return;
  }
  if (position < open.lastPosition) {
    violations.push(`message ${index} (tool): result for "${id}" is out of call order (assistant message ${open.index})`);
  }
  open.answered.add(id);
  open.lastPosition = Math.max(open.lastPosition, position);
}

function reportUnanswered(open: OpenBlock, where: string, violations: string[]): void {
  const unanswered = open.ids.filter((id) => !open.answered.has(id));
  if (unanswered.length === 0) return;
  const list = unanswered.map((id) => `"${id}"`).join(', ');
  violations.push(`message ${open.index} (assistant): tool call(s) ${list} have no result ${where}`);
}

/**
 * Throws when `messages` breaks the protocol. An `InternalError`: after the sanitizer has run, a
 * violation is a bug in loopfleet, not something the caller or the model did. The list is in
 * `details.violations` and in the message.
 */
export function assertProtocolValid(messages: readonly Message[], options: ProtocolCheckOptions = {}): void {
  const violations = protocolViolations(messages, options);
  if (violations.length === 0) return;
  throw new InternalError(`history violates the tool-call protocol: ${violations.join('; ')}`, {
    details: { violations },
  });
}
