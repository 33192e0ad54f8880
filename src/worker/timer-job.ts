import { z } from 'zod';
import { InputInvalidError, InternalError, isLoopfleetError, SessionQueueMismatchError, toLoopfleetError } from '../core/errors/index.js';
import type { AcceptedInput } from '../core/ports/session-store.js';
import { linkedSignal } from '../core/linked-signal.js';
import { assertSessionId } from '../fleet/session-id.js';
import { acceptAndKick } from '../fleet/accept-input.js';
import { armTimer } from '../fleet/arm-timer.js';
import { attemptWithin } from '../fleet/settle-within.js';
import type { TimerJobData } from '../fleet/fleet-keys.js';
import type { FleetEvent } from '../fleet/fleet-events.js';
import type { TimerRecord } from '../core/ports/timer-store.js';
import { TIMER_ID_PATTERN } from '../fleet/timer-id.js';
import { MAX_TIMER_DELAY_MS, timerNoteProblem } from '../fleet/timer-limits.js';
import type { WorkerContext } from './worker-context.js';

const timerJobSchema = z
  .object({
    sessionId: z.string(),
    timerId: z.string().regex(TIMER_ID_PATTERN),
    fireCount: z.number().int().nonnegative().max(2 ** 31 - 1),
  })
  .strict();

/**
 * What a `timer` job did: `delivered` the firing as an input; found its alarm `stale` (cancelled, fired
 * already, deleted) or `early` (the row is due later: the job waits until `dueAt`); or, as the
 * `timer.fire` hook decided, `skipped` the firing, `cancelled` the timer or `postponed` the firing to
 * `dueAt` (the job waits for it).
 */
export type TimerJobResult =
  | { outcome: 'delivered'; timerId: string; fireCount: number; seq: number; duplicate: boolean }
  | { outcome: 'stale' | 'skipped' | 'cancelled'; timerId: string }
  | { outcome: 'early' | 'postponed'; timerId: string; dueAt: number };

/**
 * Delivers a timer's firing (docs/fleet.md): when its alarm job runs and the row is still armed for
 * this firing, the firing becomes an input of kind `timer` (its input id `timer:<timerId>:<n>`, so a
 * repeated alarm delivers it once), which steers a running input at its next round boundary or runs
 * as the next one; then the row records the firing (a recurring timer is re-armed, due `everyMs`
 * from now) and `timer_fired` goes on the session's stream. A `timer.fire` hook, when one is
 * registered, decides first (deliver with its note, skip, cancel, postpone), unless the firing's input
 * was accepted already. A crash between the accept and the record
 * repeats the alarm (BullMQ retry, or the sweeper for an overdue armed row): the accept is then a
 * duplicate and the record goes through.
 */
export async function fireTimerJob(ctx: WorkerContext, data: unknown): Promise<TimerJobResult> {
  const parsed = timerJobSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputInvalidError(`invalid timer job data: ${issue?.path.join('.') || 'data'}: ${issue?.message ?? 'invalid'}`);
  }
  const job: TimerJobData = Object.assign({}, parsed.data, { sessionId: assertSessionId(parsed.data.sessionId) });
  const timer = await ctx.timers.getTimer(job.sessionId, job.timerId);
  if (timer === null || timer.status !== 'armed' || timer.fireCount !== job.fireCount) return { outcome: 'stale', timerId: job.timerId };
  // Set by a clock ahead of this one: wait for the time the row says, not the alarm's.
  if (timer.dueAt.getTime() > ctx.clock.now() + EARLY_TOLERANCE_MS) return { outcome: 'early', timerId: job.timerId, dueAt: timer.dueAt.getTime() };
  const firing = job.fireCount + 1;
  const inputId = `timer:${job.timerId}:${firing}`;
  let note = timer.note;
  // Once the firing's input is accepted (an attempt that died before recording it), the decision was made.
  if (ctx.loop.hooks.handles('timer.fire') && (await ctx.store.getInputById(job.sessionId, inputId)) === null) {
    const decision = await decideFiring(ctx, timer, firing);
    if (decision.action !== 'deliver') return applyDecision(ctx, timer, decision);
    note = decision.note;
  }
  let accepted: AcceptedInput;
  try {
    accepted = await acceptAndKick(
      { store: ctx.store, queue: ctx.queue, fair: ctx.fair, maxInputBytes: ctx.settings.maxInputBytes, publish: (...args) => ctx.publisher.publish(...args), logger: ctx.logger },
      { sessionId: job.sessionId, kind: 'timer', payload: { timerId: job.timerId, note, fireCount: firing }, inputId },
    );
  } catch (error) {
    // An alarm of another queue's session (set through this queue before timers kept to theirs):
    // nothing is written here, nor published on this queue's stream. Its own queue's sweeper finds the
    // timer overdue with no alarm there, and sets it on that queue.
    if (error instanceof SessionQueueMismatchError) {
      ctx.logger.warn({ sessionId: job.sessionId, timerId: job.timerId, queue: ctx.queueName }, "alarm of another queue's session; left to its own queue");
      return { outcome: 'stale', timerId: job.timerId };
    }
    if (isLoopfleetError(error) && error.fault === 'input' && !error.retryable) {
      // A note the hook rewrote is the hook's fault, as any invalid answer of it: the timer stays
      // armed and the alarm is retried (the hook decides again then).
      if (note !== timer.note) {
        const failure = new InternalError(`the inbox refuses the note the timer.fire hook set (${error.code}: ${error.message})`, { cause: error });
        await publishFired(ctx, job.sessionId, null, { timerId: job.timerId, fireCount: firing, outcome: 'error', error: { code: failure.code, message: failure.message } });
        throw failure;
      }
      // The timer's own note (over LOOPFLEET_MAX_INPUT_BYTES) would be refused at every alarm: the
      // timer is cancelled rather than left armed and overdue for the sweeper forever.
      await ctx.timers.cancelTimer(job.sessionId, job.timerId);
      await publishFired(ctx, job.sessionId, null, { timerId: job.timerId, fireCount: firing, outcome: 'error', error: { code: error.code, message: error.message } });
    }
    throw error;
  }
  const recorded = await recordAndRearm(ctx, job.sessionId, job.timerId, job.fireCount);
  // Announced by whichever attempt completed the firing: this one recorded it, or delivered it first.
  // A duplicate accept that another attempt already recorded has nothing to add.
  if (recorded !== null || !accepted.duplicate) await publishFired(ctx, job.sessionId, accepted.seq, { timerId: job.timerId, fireCount: firing, outcome: 'delivered' });
  return { outcome: 'delivered', timerId: job.timerId, fireCount: firing, seq: accepted.seq, duplicate: accepted.duplicate };
}

/** An alarm this far ahead of the row's due time is moved to that time (clocks of hosts differ). */
export const EARLY_TOLERANCE_MS = 1000;

/** What the `timer.fire` hook decided for one firing. */
type FiringDecision = { action: 'deliver'; note: string } | { action: 'skip' } | { action: 'cancel' } | { action: 'postpone'; delayMs: number };

/**
 * Runs the `timer.fire` hook. A hook that throws, does not answer within `timerHookTimeoutMs` (its
 * signal is then aborted), or leaves a note or delay the firing cannot take, is announced as
 * `outcome: 'error'` and thrown: the timer stays armed and the alarm is retried.
 */
async function decideFiring(ctx: WorkerContext, timer: TimerRecord, firing: number): Promise<FiringDecision> {
  // The hook's signal: the worker's forced stop, or the hook's own deadline.
  const deadline = new AbortController();
  const linked = linkedSignal([ctx.shutdown, deadline.signal]);
  const fire = { sessionId: timer.sessionId, timerId: timer.timerId, note: timer.note, dueAt: timer.dueAt, fireCount: firing, everyMs: timer.everyMs, createdBy: timer.createdBy, postponeMs: 0, signal: linked.signal };
  try {
    const timeoutMs = ctx.settings.timerHookTimeoutMs;
    const attempt = await attemptWithin(ctx.loop.hooks.run('timer.fire', fire), timeoutMs);
    if (!attempt.ok && attempt.timedOut) {
      const error = new InternalError(`the timer.fire hook did not answer within ${timeoutMs} ms`);
      deadline.abort(error);
      throw error;
    }
    if (!attempt.ok) throw attempt.error;
    const directive = attempt.value;
    if (directive === 'break') return { action: 'cancel' };
    if (directive === 'skip') return { action: 'skip' };
    const { note, postponeMs } = fire as { note: unknown; postponeMs: unknown };
    if (!(typeof postponeMs === 'number' && Number.isSafeInteger(postponeMs) && postponeMs >= 0 && postponeMs <= MAX_TIMER_DELAY_MS)) {
      throw new InternalError(`the timer.fire hook set postponeMs to ${String(postponeMs)}; it must be an integer from 0 to ${MAX_TIMER_DELAY_MS}`);
    }
    if (postponeMs > 0) return { action: 'postpone', delayMs: postponeMs };
    // The host's hook at fault, not the input: the firing is retried, the timer stays armed.
    const noteProblem = timerNoteProblem(note, 'the note the timer.fire hook set');
    if (noteProblem !== null) throw new InternalError(noteProblem);
    return { action: 'deliver', note: note as string };
  } catch (error) {
    const failure = toLoopfleetError(error);
    await publishFired(ctx, timer.sessionId, null, { timerId: timer.timerId, fireCount: firing, outcome: 'error', error: { code: failure.code, message: failure.message } });
    throw error;
  } finally {
    linked.dispose();
  }
}

/** Carries out a hook's `skip`, `break` or postponement; each is announced with `timer_fired`. */
async function applyDecision(ctx: WorkerContext, timer: TimerRecord, decision: Exclude<FiringDecision, { action: 'deliver' }>): Promise<TimerJobResult> {
  const { sessionId, timerId, fireCount } = timer;
  const fired = { timerId, fireCount: fireCount + 1 };
  if (decision.action === 'skip') {
    if ((await recordAndRearm(ctx, sessionId, timerId, fireCount)) === null) return { outcome: 'stale', timerId };
    await publishFired(ctx, sessionId, null, Object.assign({ outcome: 'skipped' as const }, fired));
    return { outcome: 'skipped', timerId };
  }
  if (decision.action === 'cancel') {
    if (!(await ctx.timers.cancelTimer(sessionId, timerId))) return { outcome: 'stale', timerId };
    await publishFired(ctx, sessionId, null, Object.assign({ outcome: 'cancelled' as const }, fired));
    return { outcome: 'cancelled', timerId };
  }
  const postponed = await ctx.timers.postponeFiring(sessionId, timerId, fireCount, decision.delayMs);
  if (postponed === null) return { outcome: 'stale', timerId };
  await publishFired(ctx, sessionId, null, Object.assign({ outcome: 'postponed' as const, dueAt: postponed.dueAt.toISOString() }, fired));
  return { outcome: 'postponed', timerId, dueAt: postponed.dueAt.getTime() };
}

/**
 * Records the firing (compare-and-set on `fireCount`) and sets the next alarm of a recurring timer;
 * null when a cancel or another firing came first.
 */
async function recordAndRearm(ctx: WorkerContext, sessionId: string, timerId: string, fireCount: number): Promise<TimerRecord | null> {
  const recorded = await ctx.timers.recordFiring(sessionId, timerId, fireCount);
  if (recorded?.status === 'armed') {
    try {
      await armTimer(ctx.queue, recorded, ctx.clock.now());
    } catch (error) {
      ctx.logger.warn({ err: error, sessionId, timerId }, 'recurring timer fired; its next alarm was not set (the sweeper will set it once it is overdue)');
    }
  }
  return recorded;
}

type TimerFired = Extract<FleetEvent, { type: 'timer_fired' }> extends infer E ? (E extends { type: 'timer_fired' } ? Omit<E, 'type'> : never) : never;

async function publishFired(ctx: WorkerContext, sessionId: string, inputSeq: number | null, event: TimerFired): Promise<void> {
  ctx.metrics.timerFired(event.outcome);
  try {
    await ctx.publisher.publish(sessionId, inputSeq, Object.assign({ type: 'timer_fired' as const }, event));
  } catch (error) {
    ctx.logger.warn({ err: error, sessionId, timerId: event.timerId }, 'timer fired; its timer_fired event was not published');
  }
}
