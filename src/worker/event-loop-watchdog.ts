import { url as inspectorUrl } from 'node:inspector';
import { Worker } from 'node:worker_threads';

/** What {@link startEventLoopWatchdog} returns: the running watchdog, until {@link stop}. */
export interface EventLoopWatchdog {
  /** The heartbeat period of the main thread and the check period of the watchdog thread, ms. */
  readonly tickMs: number;
  /** Ends the heartbeat and the thread. Idempotent. */
  stop(): Promise<void>;
}

export interface EventLoopWatchdogOptions {
  /** How long the main thread may go without a heartbeat before the process is killed, ms. */
  boundMs: number;
  /** The worker's id, so the thread's one log line names the process it ended. */
  workerId: string;
  /** The variable that set the bound, named in that line. */
  variable: string;
  /** A failure of the thread itself (it could not start): the worker runs on without a watchdog. */
  onError: (error: Error) => void;
}

/** Index of the heartbeat counter in the shared buffer: the main thread adds 1 every tick. */
const BEAT = 0;
/** Index of the "a debugger is attached" flag: while it is 1, a stopped main thread is not blocked. */
const DEBUGGER = 1;

/** The watchdog's period from its bound: a tenth of it (a late tick or two never counts), at most a second. */
export function watchdogTickMs(boundMs: number): number {
  return Math.max(10, Math.min(1_000, Math.floor(boundMs / 10)));
}

/**
 * The watchdog thread's source. Plain JavaScript evaluated as its own script (`eval: true`), so it is
 * the same under the compiled build and a TypeScript loader, and depends on no file of the package.
 *
 * It counts how long the heartbeat has not moved, adding each check's elapsed time capped at two
 * ticks: a check that comes much later than its tick means this thread did not run either — the whole
 * process was stopped (SIGSTOP, a suspended host) — and that time says nothing about the main thread.
 * Past the bound it writes one JSON line to standard error (synchronously: the process ends right
 * after, and the main thread, which owns the logger, cannot run) and kills the process with SIGKILL,
 * which no handler of the blocked thread can delay.
 */
const THREAD_SOURCE = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { buffer, boundMs, tickMs, workerId, variable } = workerData;
const state = new Int32Array(buffer);
let seen = Atomics.load(state, ${BEAT});
let blockedMs = 0;
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  const elapsed = Math.min(now - last, 2 * tickMs);
  last = now;
  const beat = Atomics.load(state, ${BEAT});
  if (beat !== seen || Atomics.load(state, ${DEBUGGER}) === 1) {
    seen = beat;
    blockedMs = 0;
    return;
  }
  blockedMs += elapsed;
  if (blockedMs < boundMs) return;
  const line = { level: 60, time: Date.now(), pid: process.pid, workerId, blockedMs: Math.round(blockedMs), boundMs, variable,
    msg: 'event loop blocked past ' + variable + ' (' + boundMs + ' ms); killing the worker process so its sessions move to other workers' };
  try { writeSync(2, JSON.stringify(line) + '\\n'); } catch {}
  process.kill(process.pid, 'SIGKILL');
}, tickMs);
`;

/**
 * Starts the event-loop watchdog of a worker process (docs/fleet.md, "Blocked workers"; S4): a
 * `worker_threads` thread that expects a heartbeat from the main thread every tick and, once none
 * came for `boundMs` (a tool or hook that never yields — `for (;;) {}` — freezes every timer, lease
 * renewal and signal handler of the process), writes one JSON line to standard error and kills the
 * process with SIGKILL. The process's leases then lapse, other workers take its sessions over, and
 * the input that blocked it counts an attempt per start, so `MAX_INPUT_ATTEMPTS` ends it `failed`.
 *
 * A main thread paused in a debugger is not blocked: while an inspector is open the heartbeat says
 * so and the thread never fires. Neither the heartbeat timer nor the thread keeps the process alive.
 */
export function startEventLoopWatchdog(options: EventLoopWatchdogOptions): EventLoopWatchdog {
  const { boundMs, workerId, variable } = options;
  const tickMs = watchdogTickMs(boundMs);
  const buffer = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  const state = new Int32Array(buffer);
  const beat = (): void => {
    Atomics.store(state, DEBUGGER, inspectorUrl() === undefined ? 0 : 1);
    Atomics.add(state, BEAT, 1);
  };
  beat();
  const heartbeat = setInterval(beat, tickMs);
  heartbeat.unref();
  const thread = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { buffer, boundMs, tickMs, workerId, variable },
    // One timer and one Int32Array: a small heap is plenty, and the thread should cost the process little.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  });
  // Unhandled, a thread's 'error' would be thrown in the main thread and end a healthy worker.
  thread.on('error', options.onError);
  thread.unref();
  let stopped: Promise<void> | null = null;
  return {
    tickMs,
    stop: () => {
      stopped ??= (async () => {
        clearInterval(heartbeat);
        await thread.terminate();
      })();
      return stopped;
    },
  };
}
