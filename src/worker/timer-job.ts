import { z } from 'zod';
import { InputInvalidError, isLoopfleetError } from '../core/errors/index.js';
import type { AcceptedInput } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { acceptAndKick } from '../producer/accept-input.js';
import { armTimer } from '../producer/arm-timer.js';
import type { TimerJobData } from '../producer/fleet-keys.js';
import { cancelTimer, getTimer, recordFiring, TIMER_ID_PATTERN } from '../store/timers.js';
import type { WorkerContext } from './worker-context.js';

const timerJobSchema = z
  .object({
    sessionId: z.string(),
    timerId: z.string().regex(TIMER_ID_PATTERN),
    fireCount: z.number().int().nonnegative().max(2 ** 31 - 1),
  })
  .strict();

/** What a `timer` job did: `delivered` the firing as an input, or found its alarm `stale` (cancelled, fired already, deleted). */
export type TimerJobResult =
  | { outcome: 'delivered'; timerId: string; fireCount: number; seq: number; duplicate: boolean }
  | { outcome: 'stale'; timerId: string }
  | { outcome: 'early'; timerId: string; dueAt: number };

/**
 * Delivers a timer's firing (DESIGN.md §4.6): when its alarm job runs and the row is still armed for
 * this firing, the firing becomes an input of kind `timer` (its input id `timer:<timerId>:<n>`, so a
 * repeated alarm delivers it once), which steers a running input at its next round boundary or runs
 * as the next one; then the row records the firing (a recurring timer is re-armed, due `everyMs`
 * from now) and `timer_fired` goes on the session's stream. A crash between the accept and the record
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
  const timer = await getTimer(ctx.pool, job.sessionId, job.timerId);
  if (timer === null || timer.status !== 'armed' || timer.fireCount !== job.fireCount) return { outcome: 'stale', timerId: job.timerId };
  // Set by a clock ahead of this one: wait for the time the row says, not the alarm's.
  if (timer.dueAt.getTime() > ctx.clock.now() + EARLY_TOLERANCE_MS) return { outcome: 'early', timerId: job.timerId, dueAt: timer.dueAt.getTime() };
  const firing = job.fireCount + 1;
  let accepted: AcceptedInput;
  try {
    accepted = await acceptAndKick(
      { store: ctx.store, queue: ctx.queue, maxInputBytes: ctx.settings.maxInputBytes, publish: (...args) => ctx.publisher.publish(...args), logger: ctx.logger },
      { sessionId: job.sessionId, kind: 'timer', payload: { timerId: job.timerId, note: timer.note, fireCount: firing }, inputId: `timer:${job.timerId}:${firing}` },
    );
  } catch (error) {
    // A firing the inbox refuses (a note over LOOPFLEET_MAX_INPUT_BYTES) would be refused at every
    // alarm: the timer is cancelled rather than left armed and overdue for the sweeper forever.
    if (isLoopfleetError(error) && error.fault === 'input' && !error.retryable) {
      await cancelTimer(ctx.pool, job.sessionId, job.timerId);
      await publishFired(ctx, job.sessionId, null, { timerId: job.timerId, fireCount: firing, outcome: 'error', error: { code: error.code, message: error.message } });
    }
    throw error;
  }
  const recorded = await recordFiring(ctx.pool, job.sessionId, job.timerId, job.fireCount);
  if (recorded?.status === 'armed') {
    try {
      await armTimer(ctx.queue, recorded, ctx.clock.now());
    } catch (error) {
      ctx.logger.warn({ err: error, sessionId: job.sessionId, timerId: job.timerId }, 'recurring timer fired; its next alarm was not set (the sweeper will set it once it is overdue)');
    }
  }
  // Announced by whichever attempt completed the firing: this one recorded it, or delivered it first.
  // A duplicate accept that another attempt already recorded has nothing to add.
  if (recorded !== null || !accepted.duplicate) await publishFired(ctx, job.sessionId, accepted.seq, { timerId: job.timerId, fireCount: firing, outcome: 'delivered' });
  return { outcome: 'delivered', timerId: job.timerId, fireCount: firing, seq: accepted.seq, duplicate: accepted.duplicate };
}

/** An alarm this far ahead of the row's due time is moved to that time (clocks of hosts differ). */
export const EARLY_TOLERANCE_MS = 1000;

type TimerFired = { timerId: string; fireCount: number; outcome: 'delivered' } | { timerId: string; fireCount: number; outcome: 'error'; error: { code: string; message: string } };

async function publishFired(ctx: WorkerContext, sessionId: string, inputSeq: number | null, event: TimerFired): Promise<void> {
  try {
    await ctx.publisher.publish(sessionId, inputSeq, Object.assign({ type: 'timer_fired' as const }, event));
  } catch (error) {
    ctx.logger.warn({ err: error, sessionId, timerId: event.timerId }, 'timer fired; its timer_fired event was not published');
  }
}
