/**
 * The bench's fake OpenAI server (`startStandardOpenAiServer`) in a child process: in production the
 * model is a remote service, so its HTTP parsing and SSE writing must not compete with the worker
 * for the bench process's one event loop, and its CPU can be reported on its own (by pid).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { onCleanup } from './fleet.js';

const ENTRY = fileURLToPath(new URL('./openai-fake-process-main.ts', import.meta.url));
/** How much of the child's stderr an error quotes (its last bytes: where a crash's stack ends). */
const STDERR_TAIL = 4_000;
/** After its stdin ends the child closes its server and exits at once; past this it is killed. */
const EXIT_GRACE_MS = 5_000;

export interface OpenAiServerProcess {
  /** Base URL for the SDK (`OPENAI_BASE_URL`), `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** The child's pid, to read its CPU (`cpuSnapshot({ llmServer: pid })`). */
  pid: number;
  /** Requests the server answered so far (asked of the child over its stdin). */
  requests(): Promise<number>;
  /** Stops the child and waits for its exit; idempotent. Also run by `cleanupAll` (a bench's failure). */
  close(): Promise<void>;
}

/**
 * Starts `startStandardOpenAiServer` (the same code, not a copy) in a child Node process
 * (`node --import tsx`, as `run-all.ts` runs benches) and resolves once it printed its URL, so the
 * fake model runs on its own event loop like a remote one. Rejects — with the child's stderr — if the
 * child exits first or prints no URL within `startTimeoutMs` (startup includes compiling fleet.ts's
 * imports); the child is then killed. The child also exits when this process dies, as its stdin ends.
 */
export async function startStandardOpenAiServerProcess(options: { delayMs?: number; startTimeoutMs?: number } = {}): Promise<OpenAiServerProcess> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, JSON.stringify(options.delayMs === undefined ? {} : { delayMs: options.delayMs })], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Registered before anything can fail, so the exit is never missed (a child that never spawned has none).
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => void (child.pid === undefined && resolve()));
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => void (stderr = (stderr + text).slice(-STDERR_TAIL)));
  // Writing to a child that already exited fails with EPIPE: its exit is reported elsewhere.
  child.stdin.on('error', () => undefined);
  const lines = createInterface({ input: child.stdout });
  /** Callers of `requests()` waiting for the child's answers, which come in the order asked. */
  const counts: { resolve: (count: number) => void; reject: (error: Error) => void }[] = [];

  let listening = false;
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

  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`openai fake server process printed no URL within ${startTimeoutMs} ms; stderr: ${stderr.trim() || '(empty)'}`)), startTimeoutMs);
    lines.on('line', (line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return; // not one of the protocol's lines
      }
      if (typeof parsed !== 'object' || parsed === null) return;
      const message = parsed as { url?: unknown; requests?: unknown };
      if (typeof message.url === 'string') {
        clearTimeout(timer);
        listening = true;
        resolve(message.url);
      } else if (typeof message.requests === 'number') counts.shift()?.resolve(message.requests);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`openai fake server process could not start: ${error.message}`));
    });
    // 'close' rather than 'exit': stdio is drained by then, so the error carries the whole stderr.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const error = new Error(`openai fake server process exited (${code ?? signal}); stderr: ${stderr.trim() || '(empty)'}`);
      reject(error); // no-op once the URL was printed
      for (const pending of counts.splice(0)) pending.reject(error);
      // Once listening only close() should stop it: say so, since the runs that follow will fail.
      if (listening && closing === undefined) console.error(error.message);
    });
  });

  try {
    return {
      url: await url,
      pid: child.pid!,
      requests: () =>
        new Promise<number>((resolve, reject) => {
          if (child.exitCode !== null || child.signalCode !== null) return reject(new Error('openai fake server process has exited'));
          counts.push({ resolve, reject });
          child.stdin.write('requests\n');
        }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
