/**
 * CPU time of the processes a run loads — this Node process, the PostgreSQL server (every backend),
 * Redis — and of the whole machine, read from Linux `/proc`, so a figure can say where an input's CPU
 * goes. Elsewhere (no `/proc`) only this process is measured and the others read as null.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc/<pid>/stat` and `/proc/stat` (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

export interface CpuSnapshot {
  node: number;
  postgres: number | null;
  redis: number | null;
  machine: number | null;
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
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks[key] += Number(fields[11]) + Number(fields[12]); // utime + stime
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

/** CPU used so far, in milliseconds. Postgres backends that exit in between are not counted. */
export function cpuSnapshot(): CpuSnapshot {
  const usage = process.cpuUsage();
  const ticks = procTicks();
  const machine = machineTicks();
  return {
    node: (usage.user + usage.system) / 1000,
    postgres: ticks === null ? null : ticks.postgres * TICK_MS,
    redis: ticks === null ? null : ticks.redis * TICK_MS,
    machine: machine === null ? null : machine * TICK_MS,
  };
}

/** Milliseconds of CPU per item between two snapshots, by process. */
export function cpuPerItem(before: CpuSnapshot, after: CpuSnapshot, items: number): Record<keyof CpuSnapshot, number | null> {
  const per = (a: number | null, b: number | null) => (a === null || b === null ? null : Number(((b - a) / items).toFixed(2)));
  return {
    node: per(before.node, after.node),
    postgres: per(before.postgres, after.postgres),
    redis: per(before.redis, after.redis),
    machine: per(before.machine, after.machine),
  };
}
