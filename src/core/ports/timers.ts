/**
 * Durable timers as the agent's `schedule_wakeup` tool sees them (docs/client.md): the worker binds
 * it to Postgres (the row) and BullMQ (the alarm). Times are Postgres's.
 */
export interface AgentTimer {
  timerId: string;
  dueAt: Date;
  note: string;
  /** Milliseconds between firings; null for a one-shot. */
  everyMs: number | null;
  status: 'armed' | 'firing' | 'fired' | 'cancelled';
  fireCount: number;
}

export interface TimerPort {
  /** Schedules a timer (idempotent by `timerId`): the stored timer, new or already there. */
  schedule(params: { sessionId: string; timerId: string; delayMs: number; note: string; everyMs?: number }): Promise<AgentTimer>;
  /** The session's armed timers, soonest first. */
  list(sessionId: string): Promise<AgentTimer[]>;
  /** Cancels an armed timer; false when none is armed under that id. */
  cancel(sessionId: string, timerId: string): Promise<boolean>;
}
