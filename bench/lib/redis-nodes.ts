/**
 * What the cluster bench reads from the servers themselves, by pid and by node, so that other work on
 * the same machine (other test suites using the machine's Redis and Postgres) does not count:
 * - the pid of the `redis-server` listening on a port (its process title is `redis-server host:port`);
 * - the pids of the Postgres backends connected to one database (title `postgres: … <user> <db> …`);
 * - `INFO commandstats` of one node: calls per command, those a script made included.
 * Linux `/proc` only; elsewhere the pids read as null and their CPU is not reported.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { commandStats } from './fleet.js';
import { processCpuMs } from './process-cpu.js';

/** Commands the bench, the clients' slot-map refreshes and health checks send: not the fleet's work per input. */
export const HOUSEKEEPING = new Set(['info', 'cluster', 'ping', 'client', 'command', 'hello', 'select', 'config', 'readonly']);

function titles(): { pid: number; title: string }[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  const found: { pid: number; title: string }[] = [];
  for (const entry of entries) {
    try {
      found.push({ pid: Number(entry), title: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** The pid of the `redis-server` listening on `port`, or null (none, or no `/proc`). */
export function redisServerPid(port: number): number | null {
  const pattern = new RegExp(`^redis-server \\S*:${port}(\\s|$)`);
  return titles().find((entry) => pattern.test(entry.title))?.pid ?? null;
}

/** The pids of the Postgres backends connected to database `name` now. */
export function postgresBackendPids(name: string): number[] {
  return titles()
    .filter((entry) => entry.title.startsWith('postgres:') && entry.title.split(/\s+/).includes(name))
    .map((entry) => entry.pid);
}

/**
 * CPU milliseconds so far of each pid in `pids`; the caller keeps the map of the first read and
 * compares with a later one: a backend that appears in between counts from zero.
 */
export function cpuByPid(pids: readonly number[]): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms !== null) cpu.set(pid, ms);
  }
  return cpu;
}

/** Sum of `after − before` over the pids of `after` (a pid missing from `before` started in between). */
export function cpuDelta(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** One Redis node the bench reads: its role, a plain (non-cluster) connection for `INFO`, its pid. */
export interface RedisNode {
  name: string;
  role: 'single' | 'primary' | 'replica';
  port: number;
  pid: number | null;
  admin: Redis;
}

export function openRedisNode(name: string, role: RedisNode['role'], host: string, port: number): RedisNode {
  const admin = new Redis({ host, port, lazyConnect: false, maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);
  return { name, role, port, pid: redisServerPid(port), admin };
}

/** Calls per command of every node, by node name. */
export async function statsOf(nodes: readonly RedisNode[]): Promise<Record<string, Record<string, number>>> {
  const entries = await Promise.all(nodes.map(async (node) => [node.name, await commandStats(node.admin)] as const));
  return Object.fromEntries(entries);
}

/** Split of a commandstats difference: the fleet's calls (all but housekeeping), and housekeeping. */
export function workCalls(diff: Readonly<Record<string, number>>): { work: number; housekeeping: number } {
  let work = 0;
  let housekeeping = 0;
  for (const [name, calls] of Object.entries(diff)) {
    const base = name.split('|')[0]!.toLowerCase();
    if (HOUSEKEEPING.has(base)) housekeeping += calls;
    else work += calls;
  }
  return { work, housekeeping };
}
