/**
 * What the harness reads around a phase: the finish counter (polled), the start latencies, CPU per
 * input split by process, peak RSS.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { cpuSnapshot, type CpuSnapshot } from '../../lib/process-cpu.js';
import { percentile, round, sleep } from '../../lib/stats.js';
import { finishedKey } from './standard.js';

/** How often the orchestrator reads the finish counter (one GET each: the same for every system). */
const POLL_MS = 5;

export async function finishedCount(redis: Redis, runId: string): Promise<number> {
  return Number((await redis.get(finishedKey(runId))) ?? 0);
}

/** Resolves when `peers:<runId>:finished` reaches `n`, with the time it was seen (performance.now()); rejects after `timeoutMs`. */
export async function waitFinished(redis: Redis, runId: string, n: number, timeoutMs: number): Promise<number> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const count = await finishedCount(redis, runId);
    if (count >= n) return performance.now();
    if (performance.now() > until) throw new Error(`timed out: ${count}/${n} inputs finished after ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}

/** The processes a run's CPU is split by: name → pid. */
export type Pids = Record<string, number>;

export function snapshot(pids: Pids): CpuSnapshot {
  return cpuSnapshot(pids);
}

/**
 * CPU ms per input between two snapshots: each named process, postgres, redis, the orchestrator
 * (`orchestrator`: this process, polling and reading), `other` (the machine minus all of those:
 * other processes, the kernel's share not charged to a process) and `machine`.
 */
export function cpuSplit(before: CpuSnapshot, after: CpuSnapshot, items: number): Record<string, number | null> {
  const per = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null ? null : (b - a) / items);
  const split: Record<string, number | null> = {};
  let known = 0;
  for (const name of Object.keys(after.processes)) {
    const value = per(before.processes[name], after.processes[name]);
    split[name] = value;
    known += value ?? 0;
  }
  split['postgres'] = per(before.postgres, after.postgres);
  split['redis'] = per(before.redis, after.redis);
  split['orchestrator'] = per(before.node, after.node);
  known += (split['postgres'] ?? 0) + (split['redis'] ?? 0) + (split['orchestrator'] ?? 0);
  const machine = per(before.machine, after.machine);
  split['other'] = machine === null ? null : machine - known;
  split['machine'] = machine;
  return Object.fromEntries(Object.entries(split).map(([key, value]) => [key, value === null ? null : round(value, 3)]));
}

/** VmHWM (peak resident set) of `pid` in MB, null when unreadable. */
export function peakRssMb(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? round(Number(match[1]) / 1024, 1) : null;
  } catch {
    return null;
  }
}

export interface Latency {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function latency(values: readonly number[]): Latency {
  return { count: values.length, p50: round(percentile(values, 50), 1), p99: round(percentile(values, 99), 1), max: values.length === 0 ? NaN : Math.max(...values) };
}
