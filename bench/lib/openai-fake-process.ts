/**
 * The bench's fake OpenAI server (`startStandardOpenAiServer`) in a child process: in production the
 * model is a remote service, so its HTTP parsing and SSE writing must not compete with the worker
 * for the bench process's one event loop, and its CPU can be reported on its own (by pid).
 */
import { fileURLToPath } from 'node:url';
import { startBenchChild } from './bench-child.js';

const ENTRY = fileURLToPath(new URL('./openai-fake-process-main.ts', import.meta.url));

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
 * (`startBenchChild`) and resolves once it is listening, so the fake model runs on its own event loop
 * like a remote one. Rejects — with the child's stderr — if the child exits first or is not listening
 * within `startTimeoutMs`; the child is then killed. The child also exits when this process dies, as
 * its stdin ends.
 */
export async function startStandardOpenAiServerProcess(options: { delayMs?: number; startTimeoutMs?: number } = {}): Promise<OpenAiServerProcess> {
  const child = await startBenchChild<{ url: string }>(ENTRY, options.delayMs === undefined ? {} : { delayMs: options.delayMs }, {
    name: 'openai fake server process',
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
  });
  return { url: child.ready.url, pid: child.pid, requests: () => child.request<number>('requests'), close: child.close };
}
