import { AgentNotFoundError, InfrastructureError, type LoopfleetError } from '../core/errors/index.js';
import { recordedUsage } from '../core/loop/recorded-progress.js';
import type { InputRecord, InputResult, SessionRecord } from '../core/session-types.js';
import { deliverToParent } from './child-sessions.js';
import { publishFinish, steeredBefore } from './run-claimed-input.js';
import type { WorkerContext } from './worker-context.js';

/**
 * The poison-input stop (docs/fleet.md, "Poison inputs"; I8): an input started more
 * than `maxInputAttempts` times — every holder before died or was stopped while running it, e.g. a
 * tool that crashes its worker — is ended `failed` (`system.infrastructure`) instead of being run yet
 * again, so one input cannot crash-loop the fleet and block its session forever. Its open tool calls
 * stay open, like a question still waiting: a `resume` input runs them again, `abortPending` closes
 * them. The inputs steered into it end with it, each with its own `input_finished`. Its result
 * carries the rounds and usage its attempts recorded (usage rows), so the session's stats count what
 * it consumed, as they count a finished run. Fenced like every write;
 * `lease.lost` propagates to the drain.
 */
export async function giveUpInput(ctx: WorkerContext, sessionId: string, leaseToken: number, input: InputRecord, agent: string, session?: SessionRecord): Promise<InputResult> {
  const error = new InfrastructureError(
    `gave up on input ${input.seq}: started ${input.attempts - 1} time(s) without finishing (maxInputAttempts ${ctx.settings.maxInputAttempts}); a resume input runs its open tool calls again, abortPending closes them`,
  );
  ctx.logger.error({ sessionId, inputSeq: input.seq, attempts: input.attempts, code: error.code }, 'gave up on an input that never finished');
  return failUnrun(ctx, sessionId, leaseToken, input, error, agent, session);
}

/**
 * An input whose session names an agent this worker does not serve (docs/agents.md, "Rolling
 * deploys"): it fails `agent.not_found` at once, the way {@link giveUpInput} ends one, instead of
 * running on another agent's model and tools.
 */
export async function failUnservedAgent(ctx: WorkerContext, sessionId: string, leaseToken: number, input: InputRecord, agent: string, session?: SessionRecord): Promise<InputResult> {
  const error = new AgentNotFoundError(`this worker (${ctx.workerId}) does not serve agent "${agent}"; serve every agent on every worker of the fleet`, { details: { agent } });
  ctx.logger.error({ sessionId, inputSeq: input.seq, agent, code: error.code }, 'input of an agent this worker does not serve failed');
  return failUnrun(ctx, sessionId, leaseToken, input, error, UNSERVED_AGENT, session);
}

/** The metrics' `agent` label of an input whose agent this worker does not serve (any name would be unbounded). */
export const UNSERVED_AGENT = 'unserved';

/**
 * Ends a claimed input `failed` with `error` without running it; see {@link giveUpInput}. With the
 * `session` (as claimed), a child session's parent gets that outcome (docs/child-sessions.md).
 */
async function failUnrun(ctx: WorkerContext, sessionId: string, leaseToken: number, input: InputRecord, error: LoopfleetError, agent: string, session?: SessionRecord): Promise<InputResult> {
  // What its attempts consumed is its result, so the finish adds it to the session's stats and its
  // input_finished reports it. The rows change only under the fence (ours now), so this read is what
  // the commit below ends; that commit applies only while the input is running under our token, so a
  // retried or raced give-up adds it once. Its usage rows only (one per round), not the window: the
  // window may be what killed every worker that ran it, and the stop must not fail the same way. So
  // its tool calls are not counted (0).
  const usageRounds = await ctx.store.getUsageRounds(sessionId, input.seq);
  const { usage, rounds } = recordedUsage(usageRounds);
  const result: InputResult = { status: 'failed', finalText: '', rounds, toolCalls: 0, usage };
  await ctx.store.commitStep({ sessionId, leaseToken, input: { seq: input.seq, status: 'failed', result, errorCode: error.code, errorMessage: error.message } });
  ctx.metrics.inputFinished('failed', agent);
  if (session !== undefined) await deliverToParent(ctx, session, result, { code: error.code, message: error.message });
  const finished = { type: 'input_finished' as const, ...result, error: { code: error.code, message: error.message } };
  await publishFinish(ctx, sessionId, leaseToken, input.seq, finished);
  // The inputs steered into it finished with it in that commit: each gets its event too (I6).
  for (const seq of await steeredBefore(ctx, sessionId, input.seq, [])) {
    ctx.metrics.inputFinished('failed', agent);
    await publishFinish(ctx, sessionId, leaseToken, seq, Object.assign({}, finished, { steeredInto: input.seq }));
  }
  return result;
}
