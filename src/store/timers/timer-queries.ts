import { z } from 'zod';
import type { ScheduleTimerParams, TimerRecord } from '../../core/ports/timer-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertTimerId } from '../../fleet/timer-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { validateSchedule } from './validate-schedule.js';
import { optionalQueueName } from '../../fleet/queue-name.js';
import { queueMismatch } from '../agents/agent-refusals.js';

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
 * `$8` is the queue the timer is scheduled on (null: any): a session it creates runs on it, one with
 * none yet (`''`) takes it, and a session of another queue gets no timer (its alarm would fire on
 * this queue's workers).
 */
const SCHEDULE_TIMER_SQL = `
WITH created AS (
  INSERT INTO sessions (id, queue) VALUES ($1, coalesce($8::text, '')) ON CONFLICT (id) DO NOTHING
), claimed AS (
  UPDATE sessions SET queue = $8::text, updated_at = now() WHERE id = $1 AND queue = '' AND $8::text IS NOT NULL
), inserted AS (
  INSERT INTO timers (session_id, timer_id, due_at, note, every_ms, created_by)
  SELECT $1, $2, coalesce($3::timestamptz, now() + $4::bigint * interval '1 millisecond'), $5, $6, $7
   WHERE $8::text IS NULL OR NOT EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND queue NOT IN ('', $8::text))
  ON CONFLICT (session_id, timer_id) DO NOTHING
  RETURNING ${TIMER_COLUMNS}
)
SELECT * FROM inserted`;

/**
 * Schedules a timer (validated first; nothing written for a bad one). Throws `session.queue_mismatch`
 * when `queue` is given and the session runs on another one.
 */
export async function scheduleTimer(db: Queryable, params: ScheduleTimerParams): Promise<{ timer: TimerRecord; duplicate: boolean }> {
  const request = validateSchedule(params);
  const queue = optionalQueueName(params.queue);
  const values = [request.sessionId, request.timerId, request.at, request.delayMs, request.note, request.everyMs, request.createdBy, queue];
  const result = await db.query({ name: 'loopfleet_schedule_timer', text: SCHEDULE_TIMER_SQL, values });
  if (result.rows[0] !== undefined) return { timer: decodeTimer(result.rows[0]), duplicate: false };
  if (queue !== null) await assertSessionOnQueue(db, request.sessionId, queue);
  const existing = await getTimer(db, request.sessionId, request.timerId);
  // Deleted with its session between the two statements: schedule it again, once.
  if (existing === null) return scheduleTimer(db, Object.assign({}, params, { timerId: request.timerId }));
  return { timer: existing, duplicate: true };
}

/** `session.queue_mismatch` when the session runs on another queue than `queue`. */
async function assertSessionOnQueue(db: Queryable, sessionId: string, queue: string): Promise<void> {
  const found = await db.query({ text: 'SELECT queue FROM sessions WHERE id = $1', values: [sessionId] });
  const current = (found.rows[0] as { queue?: unknown } | undefined)?.queue;
  if (typeof current === 'string' && current !== '' && current !== queue) throw queueMismatch(sessionId, queue, current);
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

/**
 * Armed timers overdue by more than `graceMs` (their alarm was lost), soonest first: for the sweeper.
 * `queue`: only timers of that queue's sessions (and of sessions from before queues were recorded).
 */
export async function findOverdueTimers(db: Queryable, options: { graceMs: number; limit: number; queue?: string }): Promise<TimerRecord[]> {
  const result = await db.query({
    name: 'loopfleet_find_overdue_timers',
    text: `SELECT ${TIMER_COLUMNS} FROM timers
            WHERE status = 'armed' AND due_at < now() - $1::bigint * interval '1 millisecond'
              AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = timers.session_id AND s.queue IN ($3, '')))
            ORDER BY due_at LIMIT $2`,
    values: [options.graceMs, options.limit, options.queue ?? null],
  });
  return result.rows.map(decodeTimer);
}
