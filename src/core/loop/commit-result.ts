import type { ImagePart, ToolCall } from '../messages.js';
import { commitStep } from './commit-step.js';
import { narrowPending, toolResultMessage, type ledgerWrite } from './pending-results.js';
import type { RunContext } from './run-context.js';

/**
 * Commits one tool call's answer: its result message, its ledger row and the pending state narrowed
 * past it, in one step — a real result, a hook's skip, an in-doubt failure or an invalid question.
 */
export async function commitResult(
  ctx: RunContext,
  call: ToolCall,
  round: number,
  content: string,
  failed: boolean,
  ledger: ReturnType<typeof ledgerWrite>,
  images: readonly ImagePart[] = [],
): Promise<void> {
  await commitStep(ctx, {
    messages: [{ round, message: toolResultMessage(call, content, failed, images) }],
    toolCalls: [ledger],
    pending: narrowPending(ctx.stored.pending, [call.id]),
  });
}
