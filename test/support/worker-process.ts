import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Real `loopfleet worker` processes for fleet tests: spawned from source (tsx) with an environment,
 * paused (SIGSTOP), continued (SIGCONT), terminated (SIGTERM) or killed (SIGKILL). Their JSON log lines
 * (standard output) are parsed so a test can wait for one — never sleep; standard error is kept for
 * the failure message. A {@link WorkerProcesses} group kills whatever is still alive in `afterAll`.
 */

const CLI_ENTRY = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** One parsed pino line. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class WorkerProcess {
  readonly logs: LogLine[] = [];
  /** Standard output lines that were not JSON (rare: a crash trace). */
  readonly rawStdout: string[] = [];
  stderr = '';
  /** Resolves when the process has exited (and its pipes closed). */
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | null = null;
  #partial = '';
  readonly #waiters = new Set<() => void>();

  private constructor(
    readonly label: string,
    readonly child: ChildProcess,
  ) {
    child.stdout!.on('data', (chunk: Buffer) => this.#onStdout(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
      this.#notify();
    });
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this.#exit = { code, signal };
        this.#notify();
        resolve(this.#exit);
      });
    });
  }

  /** Spawns `loopfleet worker <args>` with exactly `env` (plus PATH). */
  static spawn(label: string, env: Record<string, string>, args: string[] = []): WorkerProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'worker', ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new WorkerProcess(label, child);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.label}: not spawned`);
    return this.child.pid;
  }

  /** The exit, once it happened; null while the process runs. */
  get exit(): ProcessExit | null {
    return this.#exit;
  }

  /** The worker id it logged at start (`<host>:<pid>:<hex>`), once started. */
  get workerId(): string | undefined {
    return this.logs.find((line) => line.msg === 'worker started')?.workerId as string | undefined;
  }

  /** Waits for the `worker started` line: tools loaded, connections open, taking jobs. */
  async ready(timeoutMs = 60_000): Promise<this> {
    await this.waitForLog((line) => line.msg === 'worker started', 'worker started', timeoutMs);
    return this;
  }

  /** Resolves with the first log line matching `predicate` (already logged or to come). */
  waitForLog(predicate: (line: LogLine) => boolean, what: string, timeoutMs = 30_000): Promise<LogLine> {
    return this.#waitUntil(() => this.logs.find(predicate), what, timeoutMs);
  }

  /** Sends a signal; false when the process is gone. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.#exit !== null) return false;
    return this.child.kill(signal);
  }

  /** SIGSTOP: the process freezes — timers, heartbeats and lock renewals included. */
  pause(): void {
    this.signal('SIGSTOP');
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    this.signal('SIGCONT');
  }

  /** SIGKILL and wait for the exit. */
  async kill(): Promise<ProcessExit> {
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    return this.exited;
  }

  /** Waits for the exit, failing (with standard error) after `timeoutMs`. */
  async waitForExit(timeoutMs = 30_000): Promise<ProcessExit> {
    await this.#waitUntil(() => this.#exit ?? undefined, 'exit', timeoutMs);
    return this.#exit!;
  }

  /** What to print when a test about this process fails. */
  diagnostics(): string {
    const tail = this.logs.slice(-15).map((line) => JSON.stringify(line));
    return `--- ${this.label} (pid ${this.child.pid ?? '?'}, exit ${JSON.stringify(this.#exit)})\nstderr:\n${this.stderr.slice(-3000)}\nlast log lines:\n${tail.join('\n')}\n${this.rawStdout.slice(-10).join('\n')}`;
  }

  #onStdout(text: string): void {
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        this.logs.push(JSON.parse(line) as LogLine);
      } catch {
        this.rawStdout.push(line);
      }
    }
    this.#notify();
  }

  #notify(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  #waitUntil<T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const attempt = (): boolean => {
        const value = check();
        if (value === undefined) return false;
        finish();
        resolve(value);
        return true;
      };
      const onChange = (): void => {
        if (attempt()) return;
        if (this.#exit !== null) {
          finish();
          reject(new Error(`${this.label} exited before ${what}\n${this.diagnostics()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${this.label}: timed out after ${timeoutMs} ms waiting for ${what}\n${this.diagnostics()}`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(onChange);
      };
      this.#waiters.add(onChange);
      onChange();
    });
  }
}

/** Every worker process a test file started; `killAll()` in `afterAll` leaves none behind. */
export class WorkerProcesses {
  readonly all: WorkerProcess[] = [];
  #count = 0;

  constructor(private readonly env: () => Record<string, string>) {}

  /** Spawns one more worker with the group's environment plus `extraEnv`. */
  spawn(extraEnv: Record<string, string> = {}, args: string[] = []): WorkerProcess {
    this.#count += 1;
    const worker = WorkerProcess.spawn(`worker-${this.#count}`, { ...this.env(), ...extraEnv }, args);
    this.all.push(worker);
    return worker;
  }

  /** Spawns one and waits until it takes jobs. */
  async start(extraEnv: Record<string, string> = {}, args: string[] = []): Promise<WorkerProcess> {
    return this.spawn(extraEnv, args).ready();
  }

  get alive(): WorkerProcess[] {
    return this.all.filter((worker) => worker.exit === null);
  }

  /** Diagnostics of every process, for a failing assertion's message. */
  diagnostics(): string {
    return this.all.map((worker) => worker.diagnostics()).join('\n');
  }

  async killAll(): Promise<void> {
    await Promise.all(this.all.map((worker) => (worker.exit === null ? worker.kill() : Promise.resolve(worker.exit))));
  }
}
