import type { PendingState } from '../pending-state.js';
import type { InputResult } from '../session-types.js';
import { abortReason } from '../ports/clock.js';
import type { TraceSpan } from '../ports/tracing.js';
import { emit } from './emit.js';
import { finishRun } from './finish-run.js';
import { budgetExceeded, budgetStop, roundLimitReached, wrapUp } from './limits.js';
import { guardStore } from '../ports/guard-store.js';
import { loadRunContext } from './load-run-context.js';
import { maybeCompact } from './compaction-phase.js';
import { unresolvedCalls } from './pending-results.js';
import { endRecoveredRound, endRound } from './end-round.js';
import { runRound } from './run-round.js';
import { CONTINUE, waitForInput, type EndStep, type NextStep } from './next-step.js';
import { cancelledEnd, failedEnd, finishingCancel } from './run-outcomes.js';
import { hookScope, type LoopDeps, type RunContext, type RunParams } from './run-context.js';
import { appendInputMessage, startInput } from './start-input.js';
import { applySteering, checkSteering } from './steering.js';
import { afterToolPhase, runToolPhase } from './tool-phase.js';
import { closeInputSpan, closeRoundSpan, openInputSpan, openRoundSpan } from './trace-spans.js';

/**
 * Runs one input of a session to its terminal status, persisting
 * every step through the store, so that a worker that dies at any point leaves a state another worker
 * continues from with the same outcome (I3–I6).
 *
 * Returns the result, committed with the input's terminal status. Throws only when the run must stop
 * without finishing the input: the lease was lost, or the signal was aborted for a reason that is
 * not a user cancel (shutdown) — the next lease holder then continues it.
 */
export async function runInput(deps: LoopDeps, params: RunParams): Promise<InputResult> {
  return (await runInputOutcome(deps, params)).result;
}

/** {@link runInput}'s result with what the terminal commit told the run, so the caller reads nothing back. */
export interface RunOutcome {
  result: InputResult;
  /** The error code and message the input was finished with (null when it has none). */
  error: { code: string; message: string } | null;
  /** Whether the session had pending inputs as the input finished: the drain claims again only then. */
  pendingInputs: boolean;
  /** The input did not finish: it waits for child sessions (`waiting_for_children`), with nothing published. */
  parked: boolean;
}

/** {@link runInput}, returning the {@link RunOutcome}. */
export async function runInputOutcome(deps: LoopDeps, params: RunParams): Promise<RunOutcome> {
  const span = openInputSpan(deps, params);
  let outcome: RunOutcome;
  try {
    outcome = await runTraced(deps, params, span);
  } catch (error) {
    closeInputSpan(span, 'stopped', 0, error);
    throw error;
  }
  closeInputSpan(span, outcome.result.status, outcome.result.rounds, outcome.error);
  return outcome;
}

async function runTraced(deps: LoopDeps, params: RunParams, span: TraceSpan): Promise<RunOutcome> {
  const ctx = await loadRunContext(Object.assign({}, deps, { store: guardStore(deps.store) }), params);
  ctx.state.trace.input = span;
  const result = await runLoaded(ctx, params);
  // A parked input may be ready already (its children answered while it ran): the drain claims again.
  if (result.status === 'waiting_for_children') return { result, error: null, pendingInputs: true, parked: true };
  return { result, error: ctx.stored.finishedError ?? null, pendingInputs: ctx.stored.pendingInputs, parked: false };
}

/**
 * The run's one finish: the {@link EndStep} the phases came to is committed here and nowhere else. A
 * failure on the way — in a phase, or in that finish's own commit — is finished once more as the
 * failure it is (`failed`, or `cancelled`); a failure of that second finish propagates.
 */
async function runLoaded(ctx: RunContext, params: RunParams): Promise<InputResult> {
  let end: EndStep | null = null;
  let failing = false;
  for (;;) {
    try {
      end ??= await runToEnd(ctx, params);
      return await finishRun(ctx, end);
    } catch (error) {
      if (failing) throw error;
      failing = true;
      end = failedEnd(ctx, error);
    }
  }
}

/** From the run's start to the step that ends it: the input's checks, open calls, then the rounds. */
async function runToEnd(ctx: RunContext, params: RunParams): Promise<EndStep> {
  const { deps } = ctx;
  emit(ctx, { type: 'session_started', resumed: params.resumed });
  if (deps.hooks.handles('session.start')) {
    await deps.hooks.run('session.start', { sessionId: params.sessionId, inputSeq: params.input.seq, resumed: params.resumed });
  }
  let next = await startInput(ctx);
  if (next.kind === 'continue') next = await recoverPending(ctx);
  if (next.kind !== 'continue') return next;
  await appendInputMessage(ctx);
  return roundLoop(ctx);
}

/** Open tool calls left by a previous holder (or a previous input) are answered before any new round. */
async function recoverPending(ctx: RunContext): Promise<NextStep> {
  const pending = ctx.stored.pending;
  if (pending === null) return CONTINUE;
  if (pending.interactions.length > 0) return waitForInput('');
  const own = pending.inputSeq === ctx.params.input.seq;
  const phase = await withToolsOf(ctx, pending, (scoped) => runToolPhase(scoped, unresolvedCalls(pending), pending.round));
  if (phase.kind !== 'done') return afterToolPhase(phase, '');
  if (own && ctx.state.round <= pending.round) await endRecoveredRound(ctx, pending.round);
  return CONTINUE;
}

/**
 * Runs `work` with the tools the input that asked for the pending calls allowed: a `resume` (or any
 * later input) runs them, but must not widen what that input's `options.tools` let the model call,
 * nor narrow it (a tool it may not call now would lose its in-doubt policy). A state that does not
 * record it (written before it was) keeps the running input's tools.
 */
async function withToolsOf<T>(ctx: RunContext, pending: PendingState, work: (ctx: RunContext) => Promise<T>): Promise<T> {
  if (pending.allowedTools === undefined) return work(ctx);
  const tools = pending.allowedTools === null ? ctx.deps.tools : ctx.deps.tools.subset(pending.allowedTools);
  // The fixed part copied with other tools; the stored mirror and the counters are the same objects.
  return await work(Object.assign({}, ctx, { tools }));
}

/** Rounds until one ends the run: the stop conditions and steering at each round start, then the round. */
async function roundLoop(ctx: RunContext): Promise<EndStep> {
  for (;;) {
    if (roundLimitReached(ctx)) {
      const next = await wrapUp(ctx);
      if (next.kind !== 'continue') return next;
      continue;
    }
    if (ctx.params.signal.aborted) return cancelledEnd(ctx, abortReason(ctx.params.signal));
    if (budgetExceeded(ctx)) {
      const next = await budgetStop(ctx);
      if (next.kind !== 'continue') return next;
      continue;
    }
    const steering = await checkSteering(ctx);
    if (steering.interrupt) return cancelledEnd(ctx, finishingCancel('interrupted by a newer input'));
    const steered = await applySteering(ctx, steering.steerable, ctx.state.round);
    if (ctx.deps.hooks.handles('round.start')) {
      const start = Object.assign(hookScope(ctx), { roundIndex: ctx.state.round, steeredInputs: steered, reason: null as string | null });
      const directive = await ctx.deps.hooks.run('round.start', start);
      if (directive === 'break') return { kind: 'finish', status: 'completed', text: '', reason: start.reason ?? 'hook_break' };
      if (directive === 'skip') {
        await endRound(ctx, false, '');
        continue;
      }
    }
    await maybeCompact(ctx);
    const next = await tracedRound(ctx);
    if (next.kind !== 'continue') return next;
  }
}

/** {@link runRound} inside the round's span (docs/tracing.md). */
async function tracedRound(ctx: RunContext): Promise<NextStep> {
  openRoundSpan(ctx);
  let next: NextStep;
  try {
    next = await runRound(ctx);
  } catch (error) {
    closeRoundSpan(ctx, error);
    throw error;
  }
  closeRoundSpan(ctx);
  return next;
}
