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
  /** Fire this many milliseconds from now (Postgres time), 0 to the longest timer delay (366 days). */
  delayMs?: number;
  /** Fire at this time, at most the longest timer delay from now either way (a past time fires at once). */
  at?: Date;
  /** What the agent is told when it fires: 1 to 10,000 characters, not blank. */
  note: string;
  /** Fire again this many milliseconds after each firing (one second to the longest timer delay). */
  everyMs?: number;
  /** Idempotency key: a repeated schedule with the same id returns the existing timer. Default: random. */
  timerId?: string;
  createdBy?: 'host' | 'agent';
  /** The queue scheduling it: a session the schedule creates runs on it; a session of another queue refuses it with `session.queue_mismatch` (docs/fleet.md). */
  queue?: string;
}

/**
 * The durable timer rows, as the client's admin, the worker's timer job and the sweeper see them.
 * Failures are the database's own (not wrapped): callers that face a user wrap them themselves.
 */
export interface TimerStore {
  /** Schedules a timer (validated first; nothing written for a bad one). */
  scheduleTimer(params: ScheduleTimerParams): Promise<{ timer: TimerRecord; duplicate: boolean }>;
  /** One timer, or null. */
  getTimer(sessionId: string, timerId: string): Promise<TimerRecord | null>;
  /** The session's armed timers, soonest first; with `all`, every timer it has, newest first. */
  listTimers(sessionId: string, options?: { all?: boolean }): Promise<TimerRecord[]>;
  /** Cancels an armed timer. False when there is none armed under that id. */
  cancelTimer(sessionId: string, timerId: string): Promise<boolean>;
  /** Records firing `fireCount + 1` if the timer is still the one expected; null when it is not. */
  recordFiring(sessionId: string, timerId: string, fireCount: number): Promise<TimerRecord | null>;
  /** Moves firing `fireCount + 1` to `delayMs` from now if still expected; null when it is not. */
  postponeFiring(sessionId: string, timerId: string, fireCount: number, delayMs: number): Promise<TimerRecord | null>;
  /** Armed timers overdue by more than `graceMs` (their alarm was lost), soonest first. */
  findOverdueTimers(options: { graceMs: number; limit: number; queue?: string }): Promise<TimerRecord[]>;
}
