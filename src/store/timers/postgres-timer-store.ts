import type { ScheduleTimerParams, TimerRecord, TimerStore } from '../../core/ports/timer-store.js';
import type { Queryable } from '../postgres/queryable.js';
import { cancelTimer, findOverdueTimers, getTimer, listTimers, postponeFiring, recordFiring, scheduleTimer } from './timer-queries.js';

/** {@link TimerStore} on a pool: each call one statement (schedule: two at most), no transaction. */
export class PostgresTimerStore implements TimerStore {
  constructor(private readonly db: Queryable) {}

  scheduleTimer(params: ScheduleTimerParams): Promise<{ timer: TimerRecord; duplicate: boolean }> {
    return scheduleTimer(this.db, params);
  }

  getTimer(sessionId: string, timerId: string): Promise<TimerRecord | null> {
    return getTimer(this.db, sessionId, timerId);
  }

  listTimers(sessionId: string, options?: { all?: boolean }): Promise<TimerRecord[]> {
    return listTimers(this.db, sessionId, options);
  }

  cancelTimer(sessionId: string, timerId: string): Promise<boolean> {
    return cancelTimer(this.db, sessionId, timerId);
  }

  recordFiring(sessionId: string, timerId: string, fireCount: number): Promise<TimerRecord | null> {
    return recordFiring(this.db, sessionId, timerId, fireCount);
  }

  postponeFiring(sessionId: string, timerId: string, fireCount: number, delayMs: number): Promise<TimerRecord | null> {
    return postponeFiring(this.db, sessionId, timerId, fireCount, delayMs);
  }

  findOverdueTimers(options: { graceMs: number; limit: number; queue?: string }): Promise<TimerRecord[]> {
    return findOverdueTimers(this.db, options);
  }
}
