/**
 * Statistics and reporting shared by the benchmarks: medians and percentiles, the machine
 * description, and the result file every workload writes (`bench/results/<name>.json`).
 */
import { cpus, totalmem } from 'node:os';
import { writeFile } from 'node:fs/promises';

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0–100) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const round = (value: number, digits = 2): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

export interface Machine {
  cpus: number;
  cpuModel: string;
  totalMemGb: number;
  node: string;
  /** The bench process's node flags (`npm run bench` gives it those of a deployed worker). */
  nodeFlags: string[];
}

export function machine(): Machine {
  const list = cpus();
  // The flags alone: not the module loaders (tsx's) and their paths, nor code given to evaluate.
  const skipped = (arg: string | undefined) => arg === '--import' || arg === '--require' || arg === '--loader' || arg === '--eval';
  const nodeFlags = process.execArgv.filter((arg, index, all) => arg.startsWith('--') && !skipped(arg) && !skipped(all[index - 1]));
  return { cpus: list.length, cpuModel: list[0]?.model ?? 'unknown', totalMemGb: round(totalmem() / 2 ** 30, 1), node: process.version, nodeFlags };
}

export interface Target {
  target: string;
  value: number | string | null;
  met: boolean | null;
}

export interface BenchResult {
  name: string;
  command: string;
  runs: number;
  targets: Target[];
  [key: string]: unknown;
}

/** Prints the result as JSON and writes `bench/results/<name>.json`, with machine, date and command. */
export async function report(result: BenchResult): Promise<void> {
  const { name, command, runs, targets, ...figures } = result;
  const full = { name, machine: machine(), date: new Date().toISOString(), command, runs, ...figures, targets };
  const json = JSON.stringify(full, null, 2);
  console.log(json);
  await writeFile(new URL(`../results/${name}.json`, import.meta.url), `${json}\n`);
}

/** Wall time of `fn` in milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index]!, index);
    }
  });
  await Promise.all(lanes);
}

/**
 * Milliseconds on CLOCK_MONOTONIC (`process.hrtime`): one clock for every process of the machine, so a
 * time stamped in one process (a delta's emit time in the worker) can be compared in another (the
 * client that receives it). `performance.now()` counts from each process's own start.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time (user + system) of this process, in milliseconds. */
export function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Fails the process if `ms` elapse: every bench is bounded in time. */
export function deadline(ms: number, what: string): () => void {
  const timer = setTimeout(() => {
    console.error(`${what}: exceeded its time bound of ${ms} ms`);
    process.exit(2);
  }, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
