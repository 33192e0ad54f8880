import type { ToolCall } from '../messages.js';
import { commitStep } from './commit-step.js';
import type { StepInput } from './step-input.js';
import { closingResultContent, ledgerWrite, narrowPending, toolResultMessage } from './pending-results.js';
import type { RunContext } from './run-context.js';

/**
 * Gives each of `calls` a synthetic result (`[skipped: …]`, `<aborted: …>`; `[interrupted: …]` for a
 * call this run had started, see `closingResultContent`) in one step, so no early exit ever leaves a
 * tool call without a result (both providers refuse a history that has one).
 */
export async function closeOpenCalls(
  ctx: RunContext,
  calls: readonly ToolCall[],
  content: string,
  round: number,
  extra: Omit<StepInput, 'messages' | 'toolCalls' | 'pending'> = {},
): Promise<void> {
  if (calls.length === 0 && Object.keys(extra).length === 0) return;
  await commitStep(
    ctx,
    Object.assign({}, extra, {
      messages: calls.map((call) => ({ round, kind: 'synthetic_tool_result' as const, message: toolResultMessage(call, closingResultContent(ctx, call, content), false) })),
      toolCalls: calls.map((call) => ledgerWrite(ctx, call, round, 'aborted')),
      pending: narrowPending(ctx.stored.pending, calls.map((call) => call.id)),
    }),
  );
}
