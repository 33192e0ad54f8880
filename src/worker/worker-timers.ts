import type { QueueShards } from '../fleet/queue-shards.js';
import type { Logger } from 'pino';
import { InfrastructureError } from '../core/errors/index.js';
import { guardedStoreCall as guarded } from '../core/ports/guard-store.js';
import type { AgentTimer, TimerPort } from '../core/ports/timers.js';
import { scheduleAndArm } from '../fleet/arm-timer.js';
import type { TimerStore } from '../core/ports/timer-store.js';

/**
 * The agent's timers (`schedule_wakeup`) on the worker: rows in Postgres, alarms on the worker's
 * queue. The tools are loaded before any connection is opened (I8), so the connections are bound
 * once the worker has them; a call before that is a `system.infrastructure` error.
 */
export class WorkerTimers implements TimerPort {
  #deps: { timers: TimerStore; queue: QueueShards; logger: Logger } | null = null;

  bind(deps: { timers: TimerStore; queue: QueueShards; logger: Logger }): void {
    this.#deps = deps;
  }

  async schedule(params: { sessionId: string; timerId: string; delayMs: number; note: string; everyMs?: number }): Promise<AgentTimer> {
    const { timers, queue, logger } = this.#bound();
    const { timer, armed } = await scheduleAndArm(timers, queue, Object.assign({}, params, { createdBy: 'agent' as const }));
    // The row is the truth: an alarm not set now is set by the sweeper once the timer is overdue.
    const error = await armed;
    if (error !== null) logger.warn({ err: error, sessionId: timer.sessionId, timerId: timer.timerId }, 'timer scheduled by the agent; its alarm was not set (the sweeper will)');
    return timer;
  }

  async list(sessionId: string): Promise<AgentTimer[]> {
    return guarded('listTimers', this.#bound().timers.listTimers(sessionId));
  }

  async cancel(sessionId: string, timerId: string): Promise<boolean> {
    return guarded('cancelTimer', this.#bound().timers.cancelTimer(sessionId, timerId));
  }

  #bound(): { timers: TimerStore; queue: QueueShards; logger: Logger } {
    if (this.#deps === null) throw new InfrastructureError('timers are not connected yet (the worker is starting)');
    return this.#deps;
  }
}
