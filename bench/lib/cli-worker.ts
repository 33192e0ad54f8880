/**
 * Real `loopfleet worker` processes for the benches that measure a worker as deployed (its own process,
 * its own memory): spawned from the source through tsx (`source`), or from the compiled `dist/` as
 * `npm run build` leaves it (`dist`: what the Docker image runs — no TypeScript loader in the process,
 * whose transpiled sources and source maps add ≈ 60 MB of RSS). `buildDist()` compiles it first.
 * Readiness is the worker's `worker started` log line (so the environment needs `LOG_LEVEL` at info or
 * below); `stop()` sends SIGTERM and kills after 10 s. Every spawned worker is also stopped by
 * `cleanupAll` (a bench's failure or time-out).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WORKER_NODE_FLAGS } from '../../src/worker/young-generation.js';
import { onCleanup } from './fleet.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = { source: fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)), dist: fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)) };
/** A JS tools module (`LOOPFLEET_TOOLS`) with the standard input's `noop`, loadable by a compiled worker. */
export const BENCH_TOOLS_MODULE = fileURLToPath(new URL('./bench-tools.mjs', import.meta.url));

export interface CliWorker {
  child: ChildProcess;
  pid: number;
  /** Resolves at `worker started`; rejects if the process exits first. */
  ready: Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it exited. Idempotent. */
  stop(): Promise<void>;
}

/** Compiles `src/` to `dist/` (`tsc -p tsconfig.build.json`, as `npm run build`); rejects with tsc's output. */
export function buildDist(): Promise<void> {
  return new Promise((resolve, reject) => {
    const tsc = spawn(process.execPath, [fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    tsc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    tsc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    tsc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc -p tsconfig.build.json failed (${String(code)}):\n${output.slice(-4000)}`))));
  });
}

/** Spawns `loopfleet worker` with this process's environment plus `env`, and node's flags as `npm run worker` does. */
export function spawnCliWorker(env: Record<string, string>, from: 'source' | 'dist' = 'source'): CliWorker {
  const args = [...WORKER_NODE_FLAGS, ...(from === 'source' ? ['--import', 'tsx', ENTRY.source, 'worker'] : [ENTRY.dist, 'worker'])];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      if (output.includes('worker started')) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${String(code)}) before it started: ${output.slice(-1000)}`)));
  });
  // Unhandled if nobody awaits it (a bench that failed earlier): the error is the exit, seen elsewhere.
  ready.catch(() => undefined);
  return { child, pid: child.pid!, ready, stop: stopOnCleanup(child) };
}

/**
 * The `stop()` of a spawned process: SIGTERM, then SIGKILL after 10 s; resolves once it exited.
 * Idempotent; also run by `cleanupAll` (a bench's failure or time-out) until the process exits.
 */
export function stopOnCleanup(child: ChildProcess): () => Promise<void> {
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };
  const unregister = onCleanup(stop);
  child.once('exit', () => unregister());
  return stop;
}

/** Resident memory of a process from `/proc/<pid>/status`, in MiB: now (`VmRSS`) and its peak so far (`VmHWM`). */
export function processMemoryMb(pid: number): { rssMb: number; peakRssMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  } catch {
    return null; // exited, or no /proc
  }
}
