/**
 * `npm run bench`: runs every workload, one process each (so none inherits another's heap or JIT
 * state), one after another, and prints a summary of their targets. Each process gets the node flags
 * `npm run fleet` starts a worker with (`WORKER_NODE_FLAGS`), as most benches run the worker in it; to
 * run one alone the same way: `node --max-semi-space-size=32 --import tsx bench/<name>.bench.ts`. Each writes
 * `bench/results/<name>.json` itself. BENCH_ONLY=a,b runs a subset (file names without `.bench.ts`).
 * Every bench bounds its own run time and cleans up its database, queue keys and processes.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { WORKER_NODE_FLAGS } from '../src/worker/young-generation.js';

const WORKLOADS = ['throughput', 'result-wait', 'latency', 'dispatch-stages', 'dispatch-hops', 'concurrency', 'history', 'scale-out', 'cluster', 'event-publish', 'openai-adapter', 'anthropic-adapter', 'storable', 'window-cache-memory', 'spawn', 'gateway-sse', 'budgets', 'fairness', 'tracing', 'cli-startup'];
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const selected = WORKLOADS.filter((name) => only === undefined || only.includes(name));

function run(name: string): Promise<number> {
  const file = fileURLToPath(new URL(`./${name}.bench.ts`, import.meta.url));
  return new Promise((resolve) => {
    // With the node flags a worker is deployed with: most benches run the worker in their own process.
    const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', file], { stdio: 'inherit' });
    const timer = setTimeout(() => child.kill('SIGTERM'), 330_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? 1);
    });
  });
}

const summary: { name: string; exitCode: number; seconds: number; targets: unknown }[] = [];
const started = performance.now();
for (const name of selected) {
  const t0 = performance.now();
  console.error(`\n=== ${name} ===`);
  const exitCode = await run(name);
  let targets: unknown = null;
  try {
    const result = JSON.parse(await readFile(new URL(`./results/${name}.json`, import.meta.url), 'utf8')) as { targets?: unknown };
    targets = result.targets ?? null;
  } catch {
    targets = null;
  }
  summary.push({ name, exitCode, seconds: Math.round((performance.now() - t0) / 1000), targets });
}
console.log(JSON.stringify({ name: 'run-all', totalSeconds: Math.round((performance.now() - started) / 1000), workloads: summary }, null, 2));
process.exitCode = summary.some((entry) => entry.exitCode !== 0) ? 1 : 0;
