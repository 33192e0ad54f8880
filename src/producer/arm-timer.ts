import type { Queue } from 'bullmq';
import { JOB, timerJobId, type TimerJobData } from './fleet-keys.js';

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
export async function armTimer(queue: Queue, timer: ArmableTimer, now: number = Date.now()): Promise<void> {
  const data: TimerJobData = { sessionId: timer.sessionId, timerId: timer.timerId, fireCount: timer.fireCount };
  await queue.add(JOB.timer, data, {
    jobId: timerJobId(timer.sessionId, timer.timerId, timer.fireCount),
    delay: Math.max(0, timer.dueAt.getTime() - now),
    // Gone once done, so the sweeper can set an alarm again under the same id if a firing was lost.
    removeOnComplete: true,
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
    attempts: 5,
    backoff: { type: 'exponential', delay: 1000 },
  });
}
