import { randomBytes } from 'node:crypto';
import { InputInvalidError } from '../../core/errors/index.js';
import type { ScheduleTimerParams } from '../../core/ports/timer-store.js';
import { assertNewSessionId } from '../../fleet/session-id.js';
import { assertTimerId } from '../../fleet/timer-id.js';
import { MAX_TIMER_DELAY_DAYS, MAX_TIMER_DELAY_MS, MIN_TIMER_EVERY_MS, timerNoteProblem, withinTimerRange } from '../../fleet/timer-limits.js';

/** A schedule request after validation (I8: nothing is written for a bad one). */
export interface ValidatedSchedule {
  sessionId: string;
  timerId: string;
  delayMs: number | null;
  at: Date | null;
  note: string;
  everyMs: number | null;
  createdBy: 'host' | 'agent';
}

/** Checks a schedule request; throws `input.invalid` / `session.invalid_id` naming the problem. */
export function validateSchedule(params: ScheduleTimerParams): ValidatedSchedule {
  if (typeof params !== 'object' || params === null) throw new InputInvalidError('timer must be an object');
  const sessionId = assertNewSessionId(params.sessionId);
  const { delayMs, at, note, everyMs, timerId, createdBy = 'host' } = params;
  if ((delayMs === undefined) === (at === undefined)) throw new InputInvalidError('a timer needs exactly one of delayMs and at');
  if (delayMs !== undefined && !wholeMs(delayMs, 0)) throw new InputInvalidError(`delayMs must be an integer from 0 to ${MAX_TIMER_DELAY_MS}`);
  if (at !== undefined && !(at instanceof Date && withinTimerRange(at))) {
    // Unbounded, a year 9999 would set a delay no queue keeps well, and a year before Postgres's range
    // would fail the write as if the database were at fault; a year out either way is a unit mix-up.
    throw new InputInvalidError(`at must be a valid Date within ${MAX_TIMER_DELAY_DAYS} days of now (a past time fires at once); got ${describeDate(at)}`);
  }
  const noteProblem = timerNoteProblem(note, 'note');
  if (noteProblem !== null) throw new InputInvalidError(noteProblem);
  if (everyMs !== undefined && !wholeMs(everyMs, MIN_TIMER_EVERY_MS)) {
    throw new InputInvalidError(`everyMs must be an integer from ${MIN_TIMER_EVERY_MS} to ${MAX_TIMER_DELAY_MS}`);
  }
  if (createdBy !== 'host' && createdBy !== 'agent') throw new InputInvalidError('createdBy must be "host" or "agent"');
  return {
    sessionId,
    timerId: timerId === undefined ? `t-${randomBytes(8).toString('hex')}` : assertTimerId(timerId),
    delayMs: delayMs ?? null,
    at: at ?? null,
    note,
    everyMs: everyMs ?? null,
    createdBy,
  };
}

function describeDate(value: unknown): string {
  return value instanceof Date ? (Number.isFinite(value.getTime()) ? value.toISOString() : 'an invalid Date') : typeof value;
}

function wholeMs(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= MAX_TIMER_DELAY_MS;
}
