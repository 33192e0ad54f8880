/**
 * A real `loopfleet gateway` process for the benches that measure the gateway as deployed: its own
 * process, its own memory and CPU (read by pid). Spawned from the source through tsx (`source`) or
 * from the compiled `dist/` (`dist`: what the Docker image runs; `buildDist()` compiles it first), or
 * as `buildGateway` in a tsx entry of the bench's own (`build`, `gateway-process-main.ts`).
 * Readiness is its `/healthz` answering 200, polled with a deadline. `stop()` sends SIGTERM and kills
 * after 10 s. Every spawned gateway is also stopped by `cleanupAll` (a bench's failure or time-out).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stopOnCleanup } from './cli-worker.js';
import { sleep } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = {
  source: fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)),
  dist: fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)),
  build: fileURLToPath(new URL('./gateway-process-main.ts', import.meta.url)),
};

/** How the gateway process is started: `loopfleet gateway` compiled or through tsx, or `buildGateway` in a tsx entry of the bench's own. */
export type GatewayFrom = 'dist' | 'source' | 'build';
/** Start-up includes compiling the sources when run through tsx. */
const READY_TIMEOUT_MS = 60_000;
const OUTPUT_KEPT = 20_000;

export interface CliGateway {
  child: ChildProcess;
  pid: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Resolves once `/healthz` answers 200; rejects if the process exits first or is not ready in time. */
  ready: Promise<void>;
  /** The last of what it wrote on stdout and stderr (for errors). */
  output(): string;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it exited. Idempotent. */
  stop(): Promise<void>;
}

/** Spawns `loopfleet gateway --port <port>` on 127.0.0.1 with this process's environment plus `env`. */
export function spawnCliGateway(env: Record<string, string>, port: number, from: GatewayFrom = 'dist'): CliGateway {
  const command = { dist: [ENTRY.dist, 'gateway'], source: ['--import', 'tsx', ENTRY.source, 'gateway'], build: ['--import', 'tsx', ENTRY.build] }[from];
  const args = [...command, '--port', String(port)];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: Object.assign({}, process.env, { GATEWAY_HOST: '127.0.0.1' }, env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-OUTPUT_KEPT));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = (async () => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      const ok = await fetch(`${url}/healthz`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) return;
      await Promise.race([sleep(100), exited]);
    }
    throw new Error(`gateway not ready (exit ${String(child.exitCode ?? child.signalCode)}): ${output.slice(-2000)}`);
  })();
  // Unhandled if nobody awaits it (a bench that failed earlier): the error is the exit, seen elsewhere.
  ready.catch(() => undefined);
  return { child, pid: child.pid!, url, ready, output: () => output, stop: stopOnCleanup(child) };
}

/** utime + stime of `/proc/<pid>/stat` in milliseconds (USER_HZ 100), or null once it exited. */
export function statCpuMs(pid: number): number | null {
  try {
    const stat = readStat(pid);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

function readStat(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8');
}
