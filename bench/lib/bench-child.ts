/**
 * Bench child processes: a part of the system that runs elsewhere in production (a remote model, a
 * producer service) run in its own Node process, so it does not compete with the worker for the bench
 * process's one event loop and its CPU can be read on its own (by pid). Both ends are here, written
 * once: `startBenchChild` (the bench's side) and `serveBenchChild` (the child entry's side).
 *
 * The child is `node --import tsx <entry> <argument as JSON>` (as `run-all.ts` runs benches). Protocol,
 * one JSON object a line:
 * - child → parent, once, when it is ready: `{"ready":<value>}` (what the bench needs, e.g. a URL);
 * - parent → child: `{"id":<n>,"request":<value>}`;
 * - child → parent: `{"id":<n>,"reply":<value>}`, or `{"id":<n>,"error":"<message>"}` when the request
 *   failed. Replies are matched by id: requests may be answered out of order.
 * Other lines on stdout are ignored. The child stops when its stdin ends — which the parent does in
 * `close()`, and the OS does when the parent dies however it dies (a bench's time-out exits without
 * cleanups) — or on SIGTERM/SIGINT.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { onCleanup } from './fleet.js';
import { parseLine } from './serve-child.js';

/** How much of the child's stderr an error quotes (its last bytes: where a crash's stack ends). */
const STDERR_TAIL = 4_000;
/** After its stdin ends the child closes what it holds and exits at once; past this it is killed. */
const EXIT_GRACE_MS = 5_000;
/** Startup includes compiling the entry's imports (fleet.ts pulls in most of src/). */
const DEFAULT_START_TIMEOUT_MS = 30_000;
/**
 * Longest wait for a reply unless the request says otherwise: longer than any bench's run, so it only
 * catches a child that stopped answering (the benches' own deadlines are usually the tighter bound).
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export interface BenchChild<Ready> {
  /** The child's pid, to read its CPU (`cpuSnapshot({ name: pid })`). */
  pid: number;
  /** The value of the child's ready line. */
  ready: Ready;
  /**
   * Sends one request and resolves with its reply (unchecked: the entry's contract). Rejects with the
   * child's error message, with its stderr if it exits first, or after `timeoutMs`.
   */
  request<Reply>(message: unknown, timeoutMs?: number): Promise<Reply>;
  /** Ends the child's stdin and waits for its exit; idempotent. Also run by `cleanupAll` (a bench's failure). */
  close(): Promise<void>;
}

/** One protocol line as an object, or undefined when the line is not one. */

/**
 * BENCH_CHILD_NODE_ARGS: more node flags for every bench child (a producer process…), space-separated,
 * for looking into a run (`--cpu-prof --cpu-prof-dir=/tmp/prof`), never for committed figures.
 */
const PROFILE_FLAGS = (process.env['BENCH_CHILD_NODE_ARGS'] ?? '').split(' ').filter((flag) => flag !== '');

/**
 * Spawns `entry` with `argument` and resolves once it printed its ready line. Rejects — with the
 * child's stderr — if the child exits first or is not ready within `startTimeoutMs`; the child is then
 * killed. `name` says which child in errors.
 */
export async function startBenchChild<Ready>(entry: string, argument: unknown, options: { name: string; startTimeoutMs?: number }): Promise<BenchChild<Ready>> {
  const { name } = options;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const child = spawn(process.execPath, [...PROFILE_FLAGS, '--import', 'tsx', entry, JSON.stringify(argument)], { stdio: ['pipe', 'pipe', 'pipe'] });
  // Registered before anything can fail, so the exit is never missed (a child that never spawned has none).
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => void (child.pid === undefined && resolve()));
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => void (stderr = (stderr + text).slice(-STDERR_TAIL)));
  const failure = (what: string) => new Error(`${name} ${what}; stderr: ${stderr.trim() || '(empty)'}`);
  // Writing to a child that already exited fails with EPIPE: its exit is reported elsewhere.
  child.stdin.on('error', () => undefined);
  const lines = createInterface({ input: child.stdout });
  /** Requests sent and not answered yet, by id. */
  const pending = new Map<number, { resolve: (reply: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  /** Set once the child exited: every later request fails with it at once. */
  let exitError: Error | undefined;

  let ready = false;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      unregister();
      child.stdin.end();
      const kill = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
      await exited;
      clearTimeout(kill);
      lines.close();
    })());
  const unregister = onCleanup(close);

  const readyValue = new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(failure(`was not ready within ${startTimeoutMs} ms`)), startTimeoutMs);
    lines.on('line', (line) => {
      const message = parseLine(line);
      if (message === undefined) return;
      if (!ready && 'ready' in message) {
        clearTimeout(timer);
        ready = true;
        resolve(message['ready'] as Ready);
        return;
      }
      const waiter = typeof message['id'] === 'number' ? pending.get(message['id']) : undefined;
      if (waiter === undefined) return; // not a reply, or one that timed out
      pending.delete(message['id'] as number);
      if (typeof message['error'] === 'string') waiter.reject(new Error(`${name}: ${message['error']}`));
      else waiter.resolve(message['reply']);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${name} could not start: ${error.message}`));
    });
    // 'close' rather than 'exit': stdio is drained by then, so the error carries the whole stderr.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      exitError = failure(`exited (${code ?? signal})`);
      reject(exitError); // no-op once ready
      for (const waiter of pending.values()) waiter.reject(exitError);
      pending.clear();
      // Once ready only close() should stop it: say so, since the runs that follow will fail.
      if (ready && closing === undefined) console.error(exitError.message);
    });
  });

  const request = <Reply>(message: unknown, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS) =>
    new Promise<Reply>((resolve, reject) => {
      if (exitError !== undefined) return reject(exitError);
      if (closing !== undefined) return reject(new Error(`${name} is closed`));
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(failure(`did not answer ${JSON.stringify(message)} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply as Reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.stdin.write(`${JSON.stringify({ id, request: message })}\n`);
    });

  try {
    return { ready: await readyValue, pid: child.pid!, request, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export { serveBenchChild, type BenchChildService } from './serve-child.js';
