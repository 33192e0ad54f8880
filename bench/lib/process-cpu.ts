/**
 * CPU time of the processes a run loads — this Node process, the PostgreSQL server (every backend),
 * Redis, any other process named by pid (a fake model server in its own process) — and of the whole
 * machine, read from Linux `/proc`, so a figure can say where an input's CPU goes. Elsewhere (no
 * `/proc`) only this process is measured and the others read as null.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc/<pid>/stat` and `/proc/stat` (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

export interface CpuSnapshot {
  node: number;
  postgres: number | null;
  redis: number | null;
  machine: number | null;
  /** The processes asked for by name (`cpuSnapshot({ llmServer: pid })`); null when unreadable (exited, no `/proc`). */
  processes: Record<string, number | null>;
}

/** Milliseconds of CPU per item, by process: the fixed ones plus every process named in the snapshots. */
export interface CpuPerItem {
  node: number | null;
  postgres: number | null;
  redis: number | null;
  machine: number | null;
  [process: string]: number | null;
}

/**
 * utime + stime of one `/proc/<pid>/stat` line (fields after the command name, which may hold
 * spaces); with `children`, plus cutime + cstime: the time of its children that exited and were
 * reaped.
 */
function statTicks(stat: string, children = false): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return children ? own + Number(fields[13]) + Number(fields[14]) : own;
}

/**
 * CPU time of process `pid` so far, in milliseconds: the sum of its threads' time on a CPU from
 * `/proc/<pid>/task/<tid>/schedstat` (nanoseconds — a window of a second with a few milliseconds of
 * CPU reads as such, where `/proc/<pid>/stat`'s 10 ms ticks read 0 or 10), or those ticks where
 * schedstat is missing; null when unreadable. A thread that exits takes its time with it (Node's
 * threads live as long as the process).
 */
export function processCpuMs(pid: number): number | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null; // exited, or no /proc
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that exited meanwhile; no schedstat at all is caught below.
    }
  }
  if (ns > 0) return ns / 1e6;
  const ticks = pidTicks(pid);
  return ticks === null ? null : ticks * TICK_MS;
}

function pidTicks(pid: number): number | null {
  try {
    return statTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null; // exited, or no /proc
  }
}

function procTicks(): { postgres: number; redis: number } | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return null;
  }
  const ticks = { postgres: 0, redis: 0 };
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const key = name.startsWith('postgres') ? 'postgres' : name.startsWith('redis') ? 'redis' : null;
    if (key === null) continue;
    // With their reaped children's time: a Postgres backend that exits (a pool closing an idle
    // connection) moves its time to the postmaster's, where the sum still counts it.
    ticks[key] += statTicks(stat, true);
  }
  return ticks;
}

function machineTicks(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user, nice, system, irq, softirq, steal: everything but idle and iowait.
    return fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + (fields[7] ?? 0);
  } catch {
    return null;
  }
}

/**
 * CPU used so far, in milliseconds. A Postgres backend that exits in between still counts: its time
 * moves to the postmaster's reaped-children time, which is summed too.
 * `processes` names other pids to read too, e.g. `{ llmServer: pid }` for a fake model server run in
 * its own process: it is not this process, postgres or redis, so only `machine` would count it otherwise.
 */
export function cpuSnapshot(processes: Readonly<Record<string, number>> = {}): CpuSnapshot {
  const usage = process.cpuUsage();
  const ticks = procTicks();
  const machine = machineTicks();
  return {
    node: (usage.user + usage.system) / 1000,
    postgres: ticks === null ? null : ticks.postgres * TICK_MS,
    redis: ticks === null ? null : ticks.redis * TICK_MS,
    machine: machine === null ? null : machine * TICK_MS,
    processes: Object.fromEntries(
      Object.entries(processes).map(([name, pid]) => [name, processCpuMs(pid)]),
    ),
  };
}

/**
 * Milliseconds of CPU per item between two snapshots, by process. A process named in the snapshots
 * comes before `machine` (which includes it), and reads null unless both snapshots read it.
 */
export function cpuPerItem(before: CpuSnapshot, after: CpuSnapshot, items: number): CpuPerItem {
  const per = (a: number | null | undefined, b: number | null | undefined) =>
    a === null || a === undefined || b === null || b === undefined ? null : Number(((b - a) / items).toFixed(2));
  const named = Object.keys(after.processes).map((name) => [name, per(before.processes[name], after.processes[name])]);
  return {
    node: per(before.node, after.node),
    postgres: per(before.postgres, after.postgres),
    redis: per(before.redis, after.redis),
    ...Object.fromEntries(named),
    machine: per(before.machine, after.machine),
  };
}
