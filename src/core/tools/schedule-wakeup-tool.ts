import { createHash } from 'node:crypto';
import { ToolFailedError } from '../errors/index.js';
import type { AgentTimer, TimerPort } from '../ports/timers.js';
import { defineTool } from './define-tool.js';
import type { ToolContext, ToolDefinition } from './tool-types.js';

/** The name of the agent's timer tool (power-loop's `schedule_wakeup`, with `list` and `cancel` merged in). */
export const SCHEDULE_WAKEUP = 'schedule_wakeup';

/** Arguments of `schedule_wakeup`. */
export interface ScheduleWakeupArgs {
  action: 'schedule' | 'list' | 'cancel';
  delay_seconds?: number;
  note?: string;
  every_seconds?: number;
  timer_id?: string;
}

/** The longest delay or period the tool takes, in seconds (366 days, as the timers store). */
const MAX_SECONDS = 366 * 24 * 3600;

/**
 * `schedule_wakeup`: the agent sets a durable timer on its own session — `schedule` (once after
 * `delay_seconds`, or every `every_seconds` after that), `list` (its armed timers) or `cancel`
 * (`timer_id`). When a timer fires the session receives the note as a `<timer>` message. A scheduled
 * timer's id is derived from the tool call id, so a call run again after a crash (in-doubt `retry`)
 * schedules the same timer, not a second one.
 */
export function scheduleWakeupTool(timers: TimerPort): ToolDefinition<ScheduleWakeupArgs> {
  return defineTool<ScheduleWakeupArgs>({
    name: SCHEDULE_WAKEUP,
    description:
      'Durable wake-ups for this session. action=schedule sets a timer: after delay_seconds you receive your note back as a <timer> message (every every_seconds after that, if given). action=list shows your armed timers; action=cancel cancels timer_id.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['schedule', 'list', 'cancel'] },
        delay_seconds: { type: 'number', minimum: 0, maximum: MAX_SECONDS, description: 'schedule: seconds from now until it fires.' },
        note: { type: 'string', minLength: 1, maxLength: 10_000, description: 'schedule: what to remind yourself of when it fires.' },
        every_seconds: { type: 'number', minimum: 1, maximum: MAX_SECONDS, description: 'schedule: fire again this often (omit for once).' },
        timer_id: { type: 'string', minLength: 1, maxLength: 100, description: 'cancel: the id returned by schedule or list.' },
      },
      required: ['action'],
      additionalProperties: false,
    },
    execute: (args, ctx) => runAction(timers, args, ctx),
  });
}

async function runAction(timers: TimerPort, args: ScheduleWakeupArgs, ctx: ToolContext): Promise<unknown> {
  switch (args.action) {
    case 'schedule': {
      if (args.delay_seconds === undefined || args.note === undefined || args.note.trim() === '') {
        throw new ToolFailedError('schedule needs delay_seconds and a non-blank note');
      }
      const timer = await timers.schedule({
        sessionId: ctx.sessionId,
        timerId: timerIdOf(ctx.toolCallId),
        delayMs: Math.round(args.delay_seconds * 1000),
        note: args.note,
        ...(args.every_seconds !== undefined ? { everyMs: Math.round(args.every_seconds * 1000) } : {}),
      });
      return view(timer);
    }
    case 'list':
      return { timers: (await timers.list(ctx.sessionId)).map(view) };
    case 'cancel':
      if (args.timer_id === undefined) throw new ToolFailedError('cancel needs timer_id');
      return { timer_id: args.timer_id, cancelled: await timers.cancel(ctx.sessionId, args.timer_id) };
  }
}

/** `wake-<tool call id>` when the id fits the timer-id alphabet, else `wake-<its hash>`. */
function timerIdOf(toolCallId: string): string {
  return /^[A-Za-z0-9_.:@/-]{1,90}$/.test(toolCallId) ? `wake-${toolCallId}` : `wake-${createHash('sha256').update(toolCallId).digest('hex').slice(0, 32)}`;
}

function view(timer: AgentTimer): Record<string, unknown> {
  return {
    timer_id: timer.timerId,
    status: timer.status,
    due_at: timer.dueAt.toISOString(),
    every_seconds: timer.everyMs === null ? null : timer.everyMs / 1000,
    fire_count: timer.fireCount,
    note: timer.note,
  };
}
