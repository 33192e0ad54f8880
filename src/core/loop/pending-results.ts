import type { ImagePart, MessageContent, ToolCall, ToolMessage } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import type { ToolCallStatus } from '../session-types.js';
import type { ToolCallWrite } from '../ports/session-store.js';
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from '../tools/parse-tool-arguments.js';
import type { RunContext } from './run-context.js';

/** The pending state after `ids` got their results: narrowed, or cleared when nothing is left. */
export function narrowPending(pending: PendingState | null, ids: Iterable<string>): PendingState | null {
  if (pending === null) return null;
  const resolved = new Set(ids);
  const unresolvedIds = pending.unresolvedIds.filter((id) => !resolved.has(id));
  if (unresolvedIds.length === 0) return null;
  return Object.assign({}, pending, {
    unresolvedIds,
    interactions: pending.interactions.filter((interaction) => !resolved.has(interaction.toolCallId)),
  });
}

/**
 * A tool call's result message; `isError` marks a failed call. With `images` (a tool that returned
 * some), the content is its text followed by the images, as parts.
 */
export function toolResultMessage(call: ToolCall, content: string, isError: boolean, images: readonly ImagePart[] = []): ToolMessage {
  const body: MessageContent = images.length === 0 ? content : [...(content === '' ? [] : [{ type: 'text' as const, text: content }]), ...images];
  return isError ? { role: 'tool', toolCallId: call.id, name: call.name, content: body, isError: true } : { role: 'tool', toolCallId: call.id, name: call.name, content: body };
}

/** The ledger row of `call` in `round`, with its status and what is known of its run. */
export function ledgerWrite(
  ctx: RunContext,
  call: ToolCall,
  round: number,
  status: ToolCallStatus,
  extra: { args?: unknown; errorCode?: string | null; durationMs?: number | null } = {},
): ToolCallWrite {
  return {
    toolCallId: call.id,
    inputSeq: ctx.params.input.seq,
    round,
    name: call.name,
    args: extra.args ?? safeArgs(call.arguments),
    status,
    errorCode: extra.errorCode ?? null,
    durationMs: extra.durationMs ?? null,
  };
}

/** The unresolved calls of the pending state, in model order. */
export function unresolvedCalls(pending: PendingState): ToolCall[] {
  const open = new Set(pending.unresolvedIds);
  return pending.toolCalls.filter((call) => open.has(call.id));
}

/**
 * Ledger args: the parsed JSON when it parses, else the raw text (never lost, never repaired). Text
 * nested past what a tool may receive stays text too: the store's recursive walks would overflow.
 */
function safeArgs(raw: string): unknown {
  try {
    const parsed = JSON.parse(raw) as unknown;
    return nestsDeeperThan(parsed, MAX_ARGUMENT_DEPTH) ? { raw } : parsed;
  } catch {
    return { raw };
  }
}

const SKIPPED = /^\[skipped: (.*)\]$/s;

/**
 * The synthetic result closing `call` without its own: `content` ("[skipped: …]") for a call this run
 * never started, but "[interrupted: …]" for one it did — a parallel call still running when a break
 * or a cancel stopped the batch, or one whose result the failing run never committed, may have taken
 * effect, and the model must not be told it was skipped.
 */
export function closingResultContent(ctx: RunContext, call: ToolCall, content: string): string {
  if (!ctx.state.startedCalls.has(call.id)) return content;
  const reason = SKIPPED.exec(content)?.[1];
  return reason === undefined ? content : `[interrupted: ${reason}; the call had started and may have taken effect]`;
}
