import { guardedStoreCall } from '../core/ports/guard-store.js';
import type { ScheduleTimerParams, TimerRecord, TimerStore } from '../core/ports/timer-store.js';
import { JOB, timerJobId, type TimerJobData } from './fleet-keys.js';
import type { QueueShards } from './queue-shards.js';

/** A timer as its alarm needs it. */
export interface ArmableTimer {
  sessionId: string;
  timerId: string;
  fireCount: number;
  dueAt: Date;
}

/**
 * Sets the BullMQ alarm of a timer's next firing: a delayed `timer` job, due at `dueAt` (a past time
 * fires at once). Idempotent per firing (the job id). The row in Postgres is the truth: an alarm that
 * is lost (Redis down now, flushed later) is set again by the sweeper once the timer is overdue.
 */
export async function armTimer(queues: QueueShards, timer: ArmableTimer, now: number = Date.now()): Promise<void> {
  const data: TimerJobData = { sessionId: timer.sessionId, timerId: timer.timerId, fireCount: timer.fireCount };
  await queues.for(timer.sessionId).add(JOB.timer, data, {
    jobId: timerJobId(timer.sessionId, timer.timerId, timer.fireCount),
    delay: Math.max(0, timer.dueAt.getTime() - now),
    // Gone once done, so the sweeper can set an alarm again under the same id if a firing was lost.
    removeOnComplete: true,
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
    attempts: 5,
    backoff: { type: 'exponential', delay: 1000 },
  });
}

/**
 * Schedules a timer (the row, committed) and then sets its alarm, as the host's `timers.schedule` and
 * the agent's `schedule_wakeup` both do. A duplicate is armed too: the first call's alarm may be the
 * one that was lost. `armed` settles with null once the alarm is set, or with the error that kept it
 * from being set (the sweeper sets it once the timer is overdue); it never rejects.
 */
export async function scheduleAndArm(
  timers: Pick<TimerStore, 'scheduleTimer'>,
  queue: QueueShards,
  params: ScheduleTimerParams,
): Promise<{ timer: TimerRecord; duplicate: boolean; armed: Promise<unknown> }> {
  const { timer, duplicate } = await guardedStoreCall('scheduleTimer', timers.scheduleTimer(Object.assign({ queue: queue.name }, params)));
  const armed = timer.status === 'armed' ? armTimer(queue, timer).then(() => null, (error: unknown) => error) : Promise.resolve(null);
  return { timer, duplicate, armed };
}
