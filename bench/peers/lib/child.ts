/**
 * The peers harness's child processes (a system's worker, its producer): `bench/lib/bench-child.ts`'s
 * protocol (one JSON object a line; the child side is its `serveBenchChild`), spawned with the node
 * binary and flags the harness picks — every worker gets the same young-generation flag a deployed
 * loopfleet worker gets, so no system is tuned differently by node's own settings — and killed hard
 * past a grace period. Every child is registered with `onCleanup`, so a failing run still stops it.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { onCleanup } from '../../lib/fleet.js';

const STDERR_TAIL = 4_000;
const EXIT_GRACE_MS = 8_000;

export interface PeerChild<Ready> {
  pid: number;
  ready: Ready;
  request<Reply>(message: unknown, timeoutMs: number): Promise<Reply>;
  /** Ends stdin (the child closes what it holds and exits), SIGKILL after the grace; idempotent. */
  close(): Promise<void>;
  /** The last bytes of its stderr (for reports). */
  stderr(): string;
}

export interface PeerChildOptions {
  name: string;
  nodePath?: string;
  nodeArgs?: string[];
  startTimeoutMs: number;
}

export async function startPeerChild<Ready>(entry: string, argument: unknown, options: PeerChildOptions): Promise<PeerChild<Ready>> {
  const args = [...(options.nodeArgs ?? []), '--import', 'tsx', entry, JSON.stringify(argument)];
  const child = spawn(options.nodePath ?? process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => void (child.pid === undefined && resolve()));
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => void (stderr = (stderr + text).slice(-STDERR_TAIL)));
  const failure = (what: string) => new Error(`${options.name} ${what}; stderr: ${stderr.trim() || '(empty)'}`);
  child.stdin.on('error', () => undefined);
  const lines = createInterface({ input: child.stdout });
  const pending = new Map<number, { resolve: (reply: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
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
    const timer = setTimeout(() => reject(failure(`was not ready within ${options.startTimeoutMs} ms`)), options.startTimeoutMs);
    lines.on('line', (line) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return; // a system's own output on stdout
      }
      if (typeof message !== 'object' || message === null) return;
      if (!ready && 'ready' in message) {
        clearTimeout(timer);
        ready = true;
        resolve(message['ready'] as Ready);
        return;
      }
      const waiter = typeof message['id'] === 'number' ? pending.get(message['id']) : undefined;
      if (waiter === undefined) return;
      pending.delete(message['id'] as number);
      if (typeof message['error'] === 'string') waiter.reject(new Error(`${options.name}: ${message['error']}`));
      else waiter.resolve(message['reply']);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} could not start: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      exitError = failure(`exited (${code ?? signal})`);
      reject(exitError);
      for (const waiter of pending.values()) waiter.reject(exitError);
      pending.clear();
    });
  });
  const request = <Reply>(message: unknown, timeoutMs: number) =>
    new Promise<Reply>((resolve, reject) => {
      if (exitError !== undefined) return reject(exitError);
      if (closing !== undefined) return reject(new Error(`${options.name} is closed`));
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(failure(`did not answer ${JSON.stringify(message).slice(0, 200)} within ${timeoutMs} ms`));
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
    return { ready: await readyValue, pid: child.pid!, request, close, stderr: () => stderr };
  } catch (error) {
    await close();
    throw error;
  }
}
