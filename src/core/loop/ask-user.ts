import type { ToolCall } from '../messages.js';
import type { PendingInteraction } from '../pending-state.js';
import { parseToolArguments } from '../tools/index.js';
import { commitResult } from './commit-result.js';
import { commitStep } from './commit-step.js';
import { emit } from './emit.js';
import { ledgerWrite, narrowPending, toolResultMessage } from './pending-results.js';
import type { RunContext } from './run-context.js';

const SUPERSEDED = '[skipped: superseded by a user-input request]';

/**
 * `request_user_input`: the question is persisted in the pending state (so any worker, any time
 * later, can take the answer) and the run ends `waiting_for_input`. Other calls of the same round
 * are closed as superseded, so none is left without a result. Invalid arguments are an ordinary tool error:
 * returns false after committing it, and the caller runs the other calls normally.
 */
export async function askUser(ctx: RunContext, calls: ToolCall[], ask: ToolCall, round: number): Promise<boolean> {
  const parsed = parseToolArguments(ask.arguments);
  const tool = ctx.tools.get(ask.name);
  const check = parsed.ok && tool !== undefined ? tool.checkArguments(parsed.args) : { ok: false as const, message: parsed.ok ? 'unknown tool' : parsed.reason };
  if (!parsed.ok || !check.ok) {
    const message = check.ok ? 'invalid arguments' : check.message;
    await commitResult(ctx, ask, round, `Error: ${message}`, true, ledgerWrite(ctx, ask, round, 'failed', { errorCode: 'tool.invalid_args' }));
    return false;
  }
  const args = parsed.args;
  const interaction: PendingInteraction = {
    interactionId: ask.id,
    toolCallId: ask.id,
    toolName: ask.name,
    prompt: String(args.prompt ?? ''),
    options: Array.isArray(args.options) ? args.options.map(String) : null,
    metadata: isRecord(args.metadata) ? args.metadata : {},
  };
  const others = calls.filter((call) => call !== ask && ctx.stored.pending?.unresolvedIds.includes(call.id) === true);
  const narrowed = narrowPending(ctx.stored.pending, others.map((call) => call.id));
  await commitStep(ctx, {
    messages: others.map((call) => ({ round, kind: 'synthetic_tool_result' as const, message: toolResultMessage(call, SUPERSEDED, false) })),
    // The question itself gets no ledger row: it is not executed, it is answered through `submit`.
    toolCalls: others.map((call) => ledgerWrite(ctx, call, round, 'aborted')),
    pending: narrowed === null ? null : Object.assign({}, narrowed, { interactions: [...narrowed.interactions.filter((entry) => entry.toolCallId !== ask.id), interaction] }),
  });
  emit(ctx, { type: 'user_input_requested', interactionId: interaction.interactionId, toolCallId: ask.id, prompt: interaction.prompt, options: interaction.options });
  return true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
