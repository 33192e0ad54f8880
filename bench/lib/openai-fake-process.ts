/**
 * The bench's fake OpenAI server (`startStandardOpenAiServer`) in a child process: in production the
 * model is a remote service, so its HTTP parsing and SSE writing must not compete with the worker
 * for the bench process's one event loop, and its CPU can be reported on its own (by pid).
 */
import { fileURLToPath } from 'node:url';
import { startBenchChild } from './bench-child.js';
import type { StandardOpenAiServerOptions } from './fleet.js';

const ENTRY = fileURLToPath(new URL('./openai-fake-process-main.ts', import.meta.url));

/** A moment of the hold: `CLOCK_MONOTONIC` ms (`monotonicMs`) and the watched process's CPU ms then (null: none watched, or unreadable). */
export interface HoldMark {
  t: number;
  cpuMs: number | null;
}

export interface OpenAiServerProcess {
  /** Base URL for the SDK (`OPENAI_BASE_URL`), `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** The child's pid, to read its CPU (`cpuSnapshot({ llmServer: pid })`). */
  pid: number;
  /** Requests the server answered so far (asked of the child over its stdin). */
  requests(): Promise<number>;
  /** The most requests the server had open at once. */
  peakInFlight(): Promise<number>;
  /** Names the process whose CPU the hold's marks read (`holdFirstCalls`). */
  watch(pid: number): Promise<void>;
  /** The hold's marks: when all held first calls were in flight, and when the first was answered. */
  held(): Promise<{ from: HoldMark | null; to: HoldMark | null }>;
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
export async function startStandardOpenAiServerProcess(options: StandardOpenAiServerOptions & { startTimeoutMs?: number } = {}): Promise<OpenAiServerProcess> {
  const { startTimeoutMs, ...serverOptions } = options;
  const child = await startBenchChild<{ url: string }>(ENTRY, serverOptions, {
    name: 'openai fake server process',
    ...(startTimeoutMs === undefined ? {} : { startTimeoutMs }),
  });
  return {
    url: child.ready.url,
    pid: child.pid,
    requests: () => child.request<number>('requests'),
    peakInFlight: () => child.request<number>('peakInFlight'),
    watch: async (pid) => void (await child.request<boolean>({ watch: pid })),
    held: () => child.request<{ from: HoldMark | null; to: HoldMark | null }>('held'),
    close: child.close,
  };
}
