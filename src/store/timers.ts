import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InputInvalidError } from '../core/errors/index.js';
import { assertNewSessionId, assertSessionId } from '../core/session-id.js';
import { toJsonText } from './arguments.js';
import type { Queryable } from './queryable.js';
import { parseRow } from './rows/parse-row.js';

/** `armed` (waiting to fire), `fired` (a one-shot that fired), `cancelled`. (`firing` is reserved by the schema, unused.) */
export type TimerStatus = 'armed' | 'firing' | 'fired' | 'cancelled';

/** A durable timer: the row is the truth, the BullMQ delayed `timer` job its alarm clock. */
export interface TimerRecord {
  sessionId: string;
  timerId: string;
  /** When it fires next (armed), or fired last / was due (fired, cancelled). Postgres time. */
  dueAt: Date;
  note: string;
  /** Milliseconds between firings of a recurring timer; null for a one-shot. */
  everyMs: number | null;
  status: TimerStatus;
  /** Firings delivered so far. The next firing is number `fireCount + 1`. */
  fireCount: number;
  createdBy: 'host' | 'agent';
  lastFiredAt: Date | null;
  createdAt: Date;
}

/** What schedules a timer: exactly one of `delayMs` and `at`. */
export interface ScheduleTimerParams {
  sessionId: string;
  /** Fire this many milliseconds from now (Postgres time), 0 to {@link MAX_TIMER_DELAY_MS}. */
  delayMs?: number;
  /** Fire at this time, at most {@link MAX_TIMER_DELAY_MS} from now either way (a past time fires at once). */
  at?: Date;
  /** What the agent is told when it fires: 1 to {@link MAX_TIMER_NOTE_LENGTH} characters, not blank. */
  note: string;
  /** Fire again this many milliseconds after each firing ({@link MIN_TIMER_EVERY_MS} to {@link MAX_TIMER_DELAY_MS}). */
  everyMs?: number;
  /** Idempotency key: a repeated schedule with the same id returns the existing timer. Default: random. */
  timerId?: string;
  createdBy?: 'host' | 'agent';
}

/** The longest delay or period of a timer, and how far from now its `at` may be: 366 days. */
export const MAX_TIMER_DELAY_DAYS = 366;
export const MAX_TIMER_DELAY_MS = MAX_TIMER_DELAY_DAYS * 24 * 3600 * 1000;

/** The shortest period of a recurring timer: one second. */
export const MIN_TIMER_EVERY_MS = 1000;

/** The longest timer note (as the `timer` input's payload allows). */
export const MAX_TIMER_NOTE_LENGTH = 10_000;

/**
 * A timer id: 1–100 of `[A-Za-z0-9_.:@/-]` (the input-id alphabet; short enough that the input id of
 * its firings, `timer:<id>:<n>`, fits the 200 characters an input id may have).
 */
export const TIMER_ID_PATTERN = /^[A-Za-z0-9_.:@/-]{1,100}$/;

/** What {@link TIMER_ID_PATTERN} allows, for messages. */
export const TIMER_ID_RULE = '1 to 100 of A-Z a-z 0-9 _ . : @ / -';

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

/**
 * What is wrong with `note` as a timer note, naming it `what`, or null: it must be a non-blank string
 * of at most {@link MAX_TIMER_NOTE_LENGTH} characters that Postgres can store (a NUL fails the write;
 * an unpaired surrogate would be stored as U+FFFD) and that the firing's payload is accepted with.
 */
export function timerNoteProblem(note: unknown, what: string): string | null {
  if (typeof note !== 'string' || note.trim() === '' || note.length > MAX_TIMER_NOTE_LENGTH) {
    return `${what} must be a non-blank string of at most ${MAX_TIMER_NOTE_LENGTH} characters`;
  }
  try {
    toJsonText(note, what);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
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

/**
 * Whether `at` is a time a timer may be set for: at most {@link MAX_TIMER_DELAY_MS} from now either
 * way (a past time fires at once). False for an invalid Date.
 */
export function withinTimerRange(at: Date, now: number = Date.now()): boolean {
  return Math.abs(at.getTime() - now) <= MAX_TIMER_DELAY_MS;
}

function describeDate(value: unknown): string {
  return value instanceof Date ? (Number.isFinite(value.getTime()) ? value.toISOString() : 'an invalid Date') : typeof value;
}

function wholeMs(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= MAX_TIMER_DELAY_MS;
}

const TIMER_COLUMNS = `session_id AS "sessionId", timer_id AS "timerId", due_at AS "dueAt", note, every_ms AS "everyMs",
       status, fire_count AS "fireCount", created_by AS "createdBy", last_fired_at AS "lastFiredAt", created_at AS "createdAt"`;

const timerRowSchema = z.object({
  sessionId: z.string(),
  timerId: z.string(),
  dueAt: z.date(),
  note: z.string(),
  everyMs: z.number().int().positive().nullable(),
  status: z.enum(['armed', 'firing', 'fired', 'cancelled']),
  fireCount: z.number().int().nonnegative(),
  createdBy: z.enum(['host', 'agent']),
  lastFiredAt: z.date().nullable(),
  createdAt: z.date(),
});

function decodeTimer(row: unknown): TimerRecord {
  return parseRow(timerRowSchema, row, 'timer');
}

/**
 * Creates the session if it is missing and inserts the timer, in one statement; a timer id the
 * session already has is not scheduled again (`duplicate: true`, the stored timer returned as it is).
 */
const SCHEDULE_TIMER_SQL = `
WITH created AS (
  INSERT INTO sessions (id) VALUES ($1) ON CONFLICT (id) DO NOTHING
), inserted AS (
  INSERT INTO timers (session_id, timer_id, due_at, note, every_ms, created_by)
  VALUES ($1, $2, coalesce($3::timestamptz, now() + $4::bigint * interval '1 millisecond'), $5, $6, $7)
  ON CONFLICT (session_id, timer_id) DO NOTHING
  RETURNING ${TIMER_COLUMNS}
)
SELECT * FROM inserted`;

/** Schedules a timer (validated first; nothing written for a bad one). */
export async function scheduleTimer(db: Queryable, params: ScheduleTimerParams): Promise<{ timer: TimerRecord; duplicate: boolean }> {
  const request = validateSchedule(params);
  const values = [request.sessionId, request.timerId, request.at, request.delayMs, request.note, request.everyMs, request.createdBy];
  const result = await db.query({ name: 'loopfleet_schedule_timer', text: SCHEDULE_TIMER_SQL, values });
  if (result.rows[0] !== undefined) return { timer: decodeTimer(result.rows[0]), duplicate: false };
  const existing = await getTimer(db, request.sessionId, request.timerId);
  // Deleted with its session between the two statements: schedule it again, once.
  if (existing === null) return scheduleTimer(db, Object.assign({}, params, { timerId: request.timerId }));
  return { timer: existing, duplicate: true };
}

/** One timer, or null. */
export async function getTimer(db: Queryable, sessionId: string, timerId: string): Promise<TimerRecord | null> {
  const id = assertSessionId(sessionId);
  const result = await db.query({
    name: 'loopfleet_get_timer',
    text: `SELECT ${TIMER_COLUMNS} FROM timers WHERE session_id = $1 AND timer_id = $2`,
    values: [id, assertTimerId(timerId)],
  });
  return result.rows[0] === undefined ? null : decodeTimer(result.rows[0]);
}

/** The session's armed timers, soonest first; with `all`, every timer it has, newest first. */
export async function listTimers(db: Queryable, sessionId: string, options: { all?: boolean } = {}): Promise<TimerRecord[]> {
  const id = assertSessionId(sessionId);
  const text = options.all === true
    ? `SELECT ${TIMER_COLUMNS} FROM timers WHERE session_id = $1 ORDER BY created_at DESC, timer_id LIMIT 1000`
    : `SELECT ${TIMER_COLUMNS} FROM timers WHERE session_id = $1 AND status = 'armed' ORDER BY due_at, timer_id LIMIT 1000`;
  const result = await db.query({ text, values: [id] });
  return result.rows.map(decodeTimer);
}

/** Cancels an armed timer. False when there is none armed under that id (missing, fired or cancelled already). */
export async function cancelTimer(db: Queryable, sessionId: string, timerId: string): Promise<boolean> {
  const id = assertSessionId(sessionId);
  const result = await db.query({
    name: 'loopfleet_cancel_timer',
    text: `UPDATE timers SET status = 'cancelled', updated_at = now() WHERE session_id = $1 AND timer_id = $2 AND status = 'armed'`,
    values: [id, assertTimerId(timerId)],
  });
  return result.rowCount === 1;
}

/**
 * Records firing number `fireCount + 1` of an armed timer, if it is still the one expected (armed,
 * `fireCount` firings so far): a one-shot becomes `fired`; a recurring one stays armed, due `everyMs`
 * after now (fixed delay: missed periods collapse into one firing). Returns the updated timer, or null
 * when a cancel or another firing came first.
 */
export async function recordFiring(db: Queryable, sessionId: string, timerId: string, fireCount: number): Promise<TimerRecord | null> {
  const result = await db.query({
    name: 'loopfleet_record_timer_firing',
    text: `UPDATE timers
              SET fire_count = fire_count + 1, last_fired_at = now(), updated_at = now(),
                  status = CASE WHEN every_ms IS NULL THEN 'fired' ELSE 'armed' END,
                  due_at = CASE WHEN every_ms IS NULL THEN due_at ELSE now() + every_ms * interval '1 millisecond' END
            WHERE session_id = $1 AND timer_id = $2 AND status = 'armed' AND fire_count = $3
        RETURNING ${TIMER_COLUMNS}`,
    values: [sessionId, timerId, fireCount],
  });
  return result.rows[0] === undefined ? null : decodeTimer(result.rows[0]);
}

/**
 * Moves firing `fireCount + 1` of an armed timer to `delayMs` from now (Postgres time), if it is still
 * the one expected. Returns the updated timer, or null when a cancel or another firing came first.
 */
export async function postponeFiring(db: Queryable, sessionId: string, timerId: string, fireCount: number, delayMs: number): Promise<TimerRecord | null> {
  const result = await db.query({
    name: 'loopfleet_postpone_timer_firing',
    text: `UPDATE timers SET due_at = now() + $4::bigint * interval '1 millisecond', updated_at = now()
            WHERE session_id = $1 AND timer_id = $2 AND status = 'armed' AND fire_count = $3
        RETURNING ${TIMER_COLUMNS}`,
    values: [sessionId, timerId, fireCount, delayMs],
  });
  return result.rows[0] === undefined ? null : decodeTimer(result.rows[0]);
}

/** Armed timers overdue by more than `graceMs` (their alarm was lost), soonest first: for the sweeper. */
export async function findOverdueTimers(db: Queryable, options: { graceMs: number; limit: number }): Promise<TimerRecord[]> {
  const result = await db.query({
    name: 'loopfleet_find_overdue_timers',
    text: `SELECT ${TIMER_COLUMNS} FROM timers
            WHERE status = 'armed' AND due_at < now() - $1::bigint * interval '1 millisecond'
            ORDER BY due_at LIMIT $2`,
    values: [options.graceMs, options.limit],
  });
  return result.rows.map(decodeTimer);
}

function assertTimerId(value: unknown): string {
  if (typeof value === 'string' && TIMER_ID_PATTERN.test(value)) return value;
  throw new InputInvalidError(`timerId must be ${TIMER_ID_RULE}`);
}
