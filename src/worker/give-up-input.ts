import { InfrastructureError } from '../core/errors/index.js';
import type { InputRecord, InputResult } from '../core/session-types.js';
import { publishFinish, steeredBefore } from './run-claimed-input.js';
import type { WorkerContext } from './worker-context.js';

/**
 * The poison-input stop (reference/per-session-serialization.md §6.1; I8): an input started more
 * than `maxInputAttempts` times — every holder before died or was stopped while running it, e.g. a
 * tool that crashes its worker — is ended `failed` (`system.infrastructure`) instead of being run yet
 * again, so one input cannot crash-loop the fleet and block its session forever. Its open tool calls
 * stay open, like a question still waiting: a `resume` input runs them again, `abortPending` closes
 * them. The inputs steered into it end with it, each with its own `input_finished`. Fenced like
 * every write; `lease.lost` propagates to the drain.
 */
export async function giveUpInput(ctx: WorkerContext, sessionId: string, leaseToken: number, input: InputRecord): Promise<InputResult> {
  const error = new InfrastructureError(
    `gave up on input ${input.seq}: started ${input.attempts - 1} time(s) without finishing (maxInputAttempts ${ctx.settings.maxInputAttempts}); a resume input runs its open tool calls again, abortPending closes them`,
  );
  const result: InputResult = {
    status: 'failed',
    finalText: '',
    rounds: 0,
    toolCalls: 0,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0 },
  };
  await ctx.store.commitStep({ sessionId, leaseToken, input: { seq: input.seq, status: 'failed', result, errorCode: error.code, errorMessage: error.message } });
  ctx.logger.error({ sessionId, inputSeq: input.seq, attempts: input.attempts, code: error.code }, 'gave up on an input that never finished');
  const finished = { type: 'input_finished' as const, ...result, error: { code: error.code, message: error.message } };
  await publishFinish(ctx, sessionId, input.seq, finished);
  // The inputs steered into it finished with it in that commit: each gets its event too (I6).
  for (const seq of await steeredBefore(ctx, sessionId, input.seq, [])) {
    await publishFinish(ctx, sessionId, seq, Object.assign({}, finished, { steeredInto: input.seq }));
  }
  return result;
}
