import type { TimerOptions } from '../../producer/timer-admin.js';
import { withQueue } from '../connect.js';
import { parseDuration } from '../duration.js';
import { TIMER_EVERY, TIMER_IN } from '../limits.js';
import type { TimerRecord } from '../../core/ports/timer-store.js';
import { TIMER_ID_PATTERN, TIMER_ID_RULE } from '../../fleet/timer-id.js';
import { MAX_TIMER_DELAY_DAYS, withinTimerRange } from '../../fleet/timer-limits.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { CliUsageError, parseCommandLine } from '../command-line.js';
import { warnIfNotWoken } from './send.js';

const TIMER_USAGE = 'loopfleet timer <session> <note> (--in <duration> | --at <time>) [--every <duration>] [--id <timer>] [--json]';
const TIMERS_USAGE = 'loopfleet timers <session> [--all] [--json]';
const CANCEL_USAGE = 'loopfleet cancel-timer <session> <timer> [--json]';

/**
 * `loopfleet timer <session> <note> --in <ms> | --at <time>`: schedules a durable timer; `--every`
 * makes it recurring, `--id` names it (a repeated id returns the stored timer). Prints
 * `scheduled <session> timer <id> due <time>`.
 */
export async function timerCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { in: { type: 'string' }, at: { type: 'string' }, every: { type: 'string' }, id: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [sessionId, note, ...extra] = positionals;
  if (sessionId === undefined || note === undefined || extra.length > 0) return usage(io, 'timer', TIMER_USAGE, 'expected a session and a note');
  if (note.trim() === '') return usage(io, 'timer', TIMER_USAGE, 'the note must not be empty');
  if ((values.in === undefined) === (values.at === undefined)) return usage(io, 'timer', TIMER_USAGE, 'give exactly one of --in and --at');
  if (values.id !== undefined && !TIMER_ID_PATTERN.test(values.id)) return usage(io, 'timer', TIMER_USAGE, `--id must be ${TIMER_ID_RULE}`);
  const options: TimerOptions = { note };
  if (values.in !== undefined) options.delayMs = parseDuration('in', values.in, TIMER_IN);
  if (values.at !== undefined) options.at = parseTime(values.at);
  if (values.every !== undefined) options.everyMs = parseDuration('every', values.every, TIMER_EVERY);
  if (values.id !== undefined) options.timerId = values.id;
  return withQueue(io, async (queue) => {
    const timer = await queue.timers.schedule(sessionId, options);
    warnIfNotWoken(timer, io, 'the sweeper will set its alarm once it is due');
    io.stdout(values.json ? `${JSON.stringify(timer)}\n` : `scheduled ${timer.sessionId} timer ${timer.timerId} due ${timer.dueAt.toISOString()}${timer.duplicate ? ' (duplicate)' : ''}\n`);
    return EXIT.ok;
  });
}

/** `loopfleet timers <session>`: the armed timers, soonest first (`--all`: every timer); `--json`: one timer as JSON a line. */
export async function timersCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { all: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) return usage(io, 'timers', TIMERS_USAGE, 'expected one session');
  return withQueue(io, async (queue) => {
    for (const timer of await queue.timers.list(sessionId, { all: values.all })) io.stdout(`${values.json ? JSON.stringify(timer) : formatTimer(timer)}\n`);
    return EXIT.ok;
  });
}

/** `loopfleet cancel-timer <session> <timer>`: cancels an armed timer; not found (exit 3) when there is none armed under that id. */
export async function cancelTimerCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [sessionId, timerId, ...extra] = positionals;
  if (sessionId === undefined || timerId === undefined || extra.length > 0) return usage(io, 'cancel-timer', CANCEL_USAGE, 'expected a session and a timer id');
  if (!TIMER_ID_PATTERN.test(timerId)) return usage(io, 'cancel-timer', CANCEL_USAGE, `the timer id must be ${TIMER_ID_RULE}`);
  return withQueue(io, async (queue) => {
    if (!(await queue.timers.cancel(sessionId, timerId))) {
      io.stderr(`loopfleet cancel-timer: no armed timer ${timerId} on session ${sessionId}\n`);
      return EXIT.notFound;
    }
    io.stdout(values.json ? `${JSON.stringify({ sessionId, timerId, cancelled: true })}\n` : `cancelled timer ${timerId} of ${sessionId}\n`);
    return EXIT.ok;
  });
}

/** `<id>  <status>  due <time>  once|every <ms> ms  fired <n>  <note as JSON>`. */
export function formatTimer(timer: TimerRecord): string {
  const period = timer.everyMs === null ? 'once' : `every ${timer.everyMs} ms`;
  return `${timer.timerId}  ${timer.status}  due ${timer.dueAt.toISOString()}  ${period}  fired ${timer.fireCount}  ${JSON.stringify(timer.note)}`;
}

/** An ISO 8601 time with a date (`2026-11-25T09:00:00Z`), within 366 days of now; a bare number is refused, being ambiguous. */
function parseTime(raw: string): Date {
  const date = /^\d{4}-\d{2}-\d{2}/.test(raw) ? new Date(raw) : null;
  if (date === null || !Number.isFinite(date.getTime())) throw new CliUsageError(`--at must be an ISO 8601 time such as 2026-11-25T09:00:00Z; got ${JSON.stringify(raw)}`);
  if (!withinTimerRange(date)) throw new CliUsageError(`--at must be within ${MAX_TIMER_DELAY_DAYS} days of now; got ${date.toISOString()}`);
  return date;
}

function usage(io: CliIo, command: string, line: string, problem: string): number {
  io.stderr(`loopfleet ${command}: ${problem}\nusage: ${line}\n`);
  return EXIT.usage;
}
