import type { QueueShards } from '../fleet/queue-shards.js';
import type { Logger } from 'pino';
import { InputInvalidError } from '../core/errors/index.js';
import { guardedStoreCall as guarded } from '../core/ports/guard-store.js';
import { assertSessionId } from '../fleet/session-id.js';
import type { ScheduleTimerParams, TimerRecord, TimerStore } from '../core/ports/timer-store.js';
import { plainObject } from './add-request.js';
import { scheduleAndArm } from '../fleet/arm-timer.js';
import { settleWithin } from '../fleet/settle-within.js';

/** What `timers.schedule` (and `add('timer', …)`) takes besides the session: exactly one of `delayMs` and `at`. */
export interface TimerOptions {
  /** Fire this many milliseconds from now, 0 to 366 days. */
  delayMs?: number;
  /** Fire at this time: a `Date`, an ISO 8601 string or epoch milliseconds, at most 366 days from now either way (a past time fires at once). */
  at?: Date | string | number;
  /** What the agent is told when it fires (the `<timer>` message): 1 to 10,000 characters, not blank. */
  note: string;
  /** Fire again this many milliseconds after each firing (1 s to 366 days); absent: fire once. */
  everyMs?: number;
  /** Idempotency key (1–100 of `[A-Za-z0-9_.:@/-]`): scheduling the same id again returns the existing timer. Default: random. */
  timerId?: string;
}

/** The data of `add('timer', …)`: the session and the {@link TimerOptions}. */
export type TimerAddData = TimerOptions & { sessionId: string };

/**
 * A timer as scheduled: the stored row, whether the id was scheduled before (nothing new written),
 * and `wakeQueued`: whether its alarm (the delayed job that fires it) was queued in Redis. False when
 * Redis failed or did not answer within `redisTimeoutMs`: the timer is stored, and the workers'
 * sweeper sets the alarm once it is overdue.
 */
export type ScheduledTimer = TimerRecord & { duplicate: boolean; wakeQueued: boolean };

const OPTION_KEYS = new Set(['delayMs', 'at', 'note', 'everyMs', 'timerId']);
const DATA_KEYS = new Set(['sessionId', ...OPTION_KEYS]);

/**
 * `queue.timers`: durable timers (docs/client.md). A timer is a row in Postgres, written before
 * `schedule` returns, and a BullMQ delayed job per firing; when it fires, the session gets an input of
 * kind `timer` whose message is the note, steered into a running input at its next round boundary or
 * run as the next one. The sweeper sets an alarm lost with Redis again once the timer is overdue.
 */
export class TimerAdmin {
  constructor(
    private readonly deps: {
      timers: TimerStore;
      queue: QueueShards;
      logger: Logger | null;
      /** Longest wait for Redis when setting the alarm, in milliseconds. */
      redisTimeoutMs: number;
      /** Runs an operation unless the queue is closed, and lets `close()` wait for it. */
      run: <T>(work: () => Promise<T>) => Promise<T>;
    },
  ) {}

  /**
   * Schedules a timer on a session (created if missing). Durable when it resolves; its alarm is set
   * after the commit, and a Redis failure does not fail the call (the sweeper sets it later). Throws
   * `input.invalid` and `session.invalid_id` for bad arguments, before anything is written.
   */
  async schedule(sessionId: string, options: TimerOptions): Promise<ScheduledTimer> {
    return this.add(Object.assign({}, plainObject(options, 'timer options', OPTION_KEYS), { sessionId }) as unknown as TimerAddData);
  }

  /** `add('timer', { sessionId, … })`. */
  async add(data: TimerAddData): Promise<ScheduledTimer> {
    const fields = plainObject(data, 'timer data', DATA_KEYS);
    const params: ScheduleTimerParams = { sessionId: fields.sessionId as string, note: fields.note as string, createdBy: 'host' };
    if (fields.delayMs !== undefined) params.delayMs = fields.delayMs as number;
    if (fields.at !== undefined) params.at = toDate(fields.at);
    if (fields.everyMs !== undefined) params.everyMs = fields.everyMs as number;
    if (fields.timerId !== undefined) params.timerId = fields.timerId as string;
    return this.deps.run(() => this.#schedule(params));
  }

  /** One timer of a session, or null. */
  async get(sessionId: string, timerId: string): Promise<TimerRecord | null> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => guarded('getTimer', this.deps.timers.getTimer(id, timerId)));
  }

  /** The session's armed timers, soonest first; `{ all: true }`: every timer it has (fired and cancelled too), newest first. At most 1,000. */
  async list(sessionId: string, options: { all?: boolean } = {}): Promise<TimerRecord[]> {
    const id = assertSessionId(sessionId);
    const { all } = plainObject(options, 'list options', new Set(['all']));
    if (all !== undefined && typeof all !== 'boolean') throw new InputInvalidError('all must be a boolean');
    return this.deps.run(() => guarded('listTimers', this.deps.timers.listTimers(id, { all: all === true })));
  }

  /** Cancels an armed timer; false when the session has no armed timer under that id. A firing already delivered stays delivered. */
  async cancel(sessionId: string, timerId: string): Promise<boolean> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => guarded('cancelTimer', this.deps.timers.cancelTimer(id, timerId)));
  }

  async #schedule(params: ScheduleTimerParams): Promise<ScheduledTimer> {
    const { timer, duplicate, armed } = await scheduleAndArm(this.deps.timers, this.deps.queue, params);
    const where = { sessionId: timer.sessionId, timerId: timer.timerId };
    let wakeQueued = false;
    const reported = armed.then((error) => {
      wakeQueued = error === null;
      if (error !== null) this.deps.logger?.warn({ err: error, ...where }, 'timer scheduled; its alarm was not set (the sweeper will set it once it is overdue)');
    });
    if (!(await settleWithin(reported, this.deps.redisTimeoutMs))) {
      this.deps.logger?.warn(where, 'timer scheduled; its alarm is still pending (Redis slow or down)');
      return Object.assign({}, timer, { duplicate, wakeQueued: false });
    }
    return Object.assign({}, timer, { duplicate, wakeQueued });
  }
}

function toDate(value: unknown): Date {
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : null;
  if (date === null || !Number.isFinite(date.getTime())) throw new InputInvalidError('at must be a Date, an ISO 8601 string or epoch milliseconds');
  return date;
}
