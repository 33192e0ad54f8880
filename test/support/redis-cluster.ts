import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * A real Redis Cluster for the tests: six `redis-server` processes (three primaries, one replica
 * each) on free loopback ports, each in its own temp dir, joined with `redis-cli --cluster create`.
 * Nothing is persisted (`save ""`, `appendonly no`). `cluster-node-timeout` is 2000 ms, so a killed
 * primary's replica takes over in about 3–5 s (1000 ms let a loaded machine fail a live primary
 * over by itself). `cluster-require-full-coverage` keeps its default (`yes`): after a failover every slot is covered again, and the suites never kill both nodes of a
 * shard, so nothing needs the cluster to serve with slots uncovered.
 */

export interface ClusterAddress {
  host: string;
  port: number;
}

export interface ClusterNode extends ClusterAddress {
  id: string;
}

export interface ClusterPrimary extends ClusterNode {
  /** Inclusive slot ranges it owns. */
  slots: [number, number][];
}

export interface RedisClusterOptions {
  /** `cluster-node-timeout` in ms. Default 2000. */
  nodeTimeoutMs?: number;
  /** How long start and each wait may take, in ms. Default 20 000. */
  deadlineMs?: number;
}

export interface RunningRedisCluster {
  /** All six as started, primaries first. */
  nodes: ClusterAddress[];
  /** `h:p,h:p,…` of all six, for `REDIS_CLUSTER_NODES`. */
  nodesEnv: string;
  /** The primaries that are not failed, as a live node sees them now. */
  primaries(): Promise<ClusterPrimary[]>;
  /** The primary owning `key`'s slot (`CLUSTER KEYSLOT`). */
  primaryForKey(key: string): Promise<ClusterNode>;
  /** SIGKILLs the primary owning `key`'s slot; resolves once its replica owns the slot and every live node reports `cluster_state:ok`. */
  killPrimaryForKey(key: string): Promise<{ killed: ClusterNode; promoted: ClusterNode }>;
  /** Moves one slot with its keys to the primary `toNodeId`, live (IMPORTING/MIGRATING, MIGRATE in batches, SETSLOT NODE). */
  migrateSlot(slot: number, toNodeId: string): Promise<void>;
  /** What the processes and `redis-cli` wrote, for failure messages. */
  log(): string;
  /** Stops every process and removes the files. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const SERVER_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const CLI_BIN = process.env.REDIS_CLI_BIN ?? 'redis-cli';

/** Whether the cluster suites run: when both binaries are on PATH; under CI=true always, so a missing one fails. */
export function redisClusterAvailable(): boolean {
  return (onPath(SERVER_BIN) && onPath(CLI_BIN)) || process.env.CI === 'true';
}

/** Logged by a suite that skips. */
export const REDIS_CLUSTER_MISSING = `no ${SERVER_BIN}/${CLI_BIN} on PATH (apt-get install redis-server); the Redis Cluster suites are skipped (under CI=true they fail instead)`;

interface NodeProcess {
  port: number;
  child: ChildProcess;
  exited: Promise<void>;
  output: string;
  alive: boolean;
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RunningRedisCluster> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 2000;
  const deadlineMs = options.deadlineMs ?? 20_000;
  const root = mkdtempSync(join(tmpdir(), 'loopfleet-redis-cluster-'));
  const procs: NodeProcess[] = [];
  const admins = new Map<number, Redis>();
  let cliOutput = '';

  const log = (): string => [...procs.map((p) => `--- redis-server :${p.port}${p.alive ? '' : ' (killed)'}\n${p.output}`), `--- redis-cli\n${cliOutput}`].join('\n');
  const admin = (port: number): Redis => {
    let client = admins.get(port);
    if (client === undefined || client.status === 'end') {
      client = new Redis({ host: HOST, port, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 2_000, commandTimeout: 10_000 });
      client.on('error', () => {});
      admins.set(port, client);
    }
    return client;
  };
  const call = async (port: number, ...args: (string | number)[]): Promise<unknown> => admin(port).call(String(args[0]), ...args.slice(1).map(String));
  const alive = (): NodeProcess[] => procs.filter((p) => p.alive);

  const stop = onceOnly(async () => {
    for (const client of admins.values()) client.disconnect();
    admins.clear();
    await Promise.all(procs.map((p) => stopProcess(p)));
    rmSync(root, { recursive: true, force: true });
  });

  try {
    const ports = await freePortPairs(6);
    for (const port of ports) procs.push(spawnNode(root, port, nodeTimeoutMs));
    await until(deadlineMs, 'every node answers PING', log, async () => {
      for (const p of procs) if (p.child.exitCode !== null) throw new Error(`redis-server :${p.port} exited (${p.child.exitCode})\n${log()}`);
      const pongs = await Promise.all(procs.map((p) => call(p.port, 'PING').catch(() => null)));
      return pongs.every((pong) => pong === 'PONG');
    });
    cliOutput = await runCli(['--cluster', 'create', ...ports.map((port) => `${HOST}:${port}`), '--cluster-replicas', '1', '--cluster-yes'], deadlineMs);
    await until(deadlineMs, 'cluster_state:ok on every node, every replica linked, and every node seeing 3 primaries with slots and 3 replicas', log, async () => {
      const settled = (await Promise.all(procs.map((p) => nodeSettled(call, p.port, procs.length)))).every(Boolean);
      if (!settled) return false;
      // A node still listed as a primary without slots has not yet been told it is a replica.
      const views = await Promise.all(procs.map((p) => call(p.port, 'CLUSTER', 'NODES').catch(() => '')));
      return views.every((text) => {
        const seen = parseClusterNodes(String(text));
        return seen.filter((n) => n.primary && n.slots.length > 0).length === procs.length / 2 && seen.filter((n) => n.masterId !== null).length === procs.length / 2;
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const view = async (): Promise<ParsedNode[]> => {
    for (const p of alive()) {
      const text = await call(p.port, 'CLUSTER', 'NODES').catch(() => null);
      if (typeof text === 'string') return parseClusterNodes(text);
    }
    throw new Error(`no live node answers CLUSTER NODES\n${log()}`);
  };
  const primaries = async (): Promise<ClusterPrimary[]> =>
    (await view()).filter((n) => n.primary && !n.failed).map(({ host, port, id, slots }) => ({ host, port, id, slots }));
  const slotOwner = async (slot: number): Promise<ClusterNode> => {
    const owner = (await primaries()).find((p) => p.slots.some(([from, to]) => slot >= from && slot <= to));
    if (owner === undefined) throw new Error(`no primary owns slot ${slot}`);
    return { host: owner.host, port: owner.port, id: owner.id };
  };
  const keySlot = async (key: string): Promise<number> => Number(await call(alive()[0]!.port, 'CLUSTER', 'KEYSLOT', key));
  const primaryForKey = async (key: string): Promise<ClusterNode> => slotOwner(await keySlot(key));

  const initial = await view();
  const order = [...initial.filter((n) => n.primary), ...initial.filter((n) => !n.primary)];
  const nodes = order.map(({ host, port }) => ({ host, port }));

  const killPrimaryForKey = async (key: string): Promise<{ killed: ClusterNode; promoted: ClusterNode }> => {
    const slot = await keySlot(key);
    // Under load a spurious failover may have just swapped a shard's roles, and the old primary
    // rejoins as a replica only after a while: wait for an owner with a replica linked to it.
    let killed: ClusterNode | undefined;
    let replicaIds = new Set<string>();
    await until(deadlineMs, `the owner of slot ${slot} has a linked replica`, log, async () => {
      killed = await slotOwner(slot).catch(() => undefined);
      if (killed === undefined) return false;
      const replicas = (await view()).filter((n) => n.masterId === killed!.id && !n.failed);
      const linked = await Promise.all(replicas.map((n) => replicaLinked(call, n.port)));
      replicaIds = new Set(replicas.filter((_, i) => linked[i]).map((n) => n.id));
      return replicaIds.size > 0;
    });
    const victim = killed!;
    const proc = procs.find((p) => p.port === victim.port)!;
    proc.alive = false;
    admins.get(proc.port)?.disconnect();
    signalGroup(proc.child, 'SIGKILL');
    await proc.exited;
    let promoted: ClusterNode | undefined;
    await until(deadlineMs, `a replica of :${victim.port} owns slot ${slot} and every live node is ok`, log, async () => {
      const owner = await slotOwner(slot).catch(() => undefined);
      if (owner === undefined || !replicaIds.has(owner.id)) return false;
      promoted = owner;
      const states = await Promise.all(alive().map((p) => clusterInfo(call, p.port)));
      return states.every((info) => info?.cluster_state === 'ok');
    });
    return { killed: victim, promoted: promoted! };
  };

  const migrateSlot = async (slot: number, toNodeId: string): Promise<void> => {
    const source = await slotOwner(slot);
    const live = await primaries();
    const target = live.find((p) => p.id === toNodeId);
    if (target === undefined) throw new Error(`no live primary ${toNodeId}`);
    if (target.id === source.id) return;
    await call(target.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
    await call(source.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
    for (;;) {
      const keys = (await call(source.port, 'CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) break;
      await call(source.port, 'MIGRATE', target.host, target.port, '', 0, 5_000, 'KEYS', ...keys);
    }
    // The order redis-cli uses: the target first, so it never answers MOVED back to the source.
    await call(target.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
    await call(source.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
    for (const other of live) if (other.id !== target.id && other.id !== source.id) await call(other.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
    await until(deadlineMs, `every live node sees slot ${slot} on ${target.id}`, log, async () => {
      const views = await Promise.all(alive().map((p) => call(p.port, 'CLUSTER', 'NODES').catch(() => '')));
      return views.every((text) => {
        const owner = parseClusterNodes(String(text)).find((n) => n.primary && n.slots.some(([from, to]) => slot >= from && slot <= to));
        return owner?.id === target.id;
      });
    });
  };

  return { nodes, nodesEnv: nodes.map((n) => `${n.host}:${n.port}`).join(','), primaries, primaryForKey, killPrimaryForKey, migrateSlot, log, stop };
}

function spawnNode(root: string, port: number, nodeTimeoutMs: number): NodeProcess {
  const dir = join(root, String(port));
  mkdirSync(dir);
  const conf = [
    `port ${port}`,
    `bind ${HOST}`,
    'protected-mode no',
    'daemonize no',
    `dir ${dir}`,
    'logfile ""',
    'cluster-enabled yes',
    'cluster-config-file nodes.conf',
    `cluster-node-timeout ${nodeTimeoutMs}`,
    'appendonly no',
    'save ""',
    // A replica's first sync starts at once instead of after the default 5 s.
    'repl-diskless-sync-delay 0',
    // SIGTERM exits at once instead of waiting for lagging replicas.
    'shutdown-timeout 0',
  ].join('\n');
  writeFileSync(join(dir, 'redis.conf'), `${conf}\n`);
  // Its own process group, so a kill reaches a fork (a replica's sync) too.
  const child = spawn(SERVER_BIN, [join(dir, 'redis.conf')], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: NodeProcess = { port, child, output: '', alive: true, exited: new Promise((resolve) => child.once('exit', () => resolve())) };
  const collect = (chunk: Buffer): void => {
    proc.output = (proc.output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.once('error', (error) => collect(Buffer.from(`spawn failed: ${error.message}\n`)));
  return proc;
}

type Call = (port: number, ...args: (string | number)[]) => Promise<unknown>;

async function clusterInfo(call: Call, port: number): Promise<Record<string, string> | null> {
  const text = await call(port, 'CLUSTER', 'INFO').catch(() => null);
  return typeof text === 'string' ? parseInfo(text) : null;
}

/** `cluster_state:ok`, all nodes known, and for a replica `master_link_status:up`. */
async function nodeSettled(call: Call, port: number, count: number): Promise<boolean> {
  const info = await clusterInfo(call, port);
  if (info?.cluster_state !== 'ok' || Number(info.cluster_known_nodes) !== count) return false;
  const role = await replicationRole(call, port);
  return role === 'master' || role === 'linked';
}

/** Whether the node is a replica whose link to its primary is up (it can be promoted). */
async function replicaLinked(call: Call, port: number): Promise<boolean> {
  return (await replicationRole(call, port)) === 'linked';
}

async function replicationRole(call: Call, port: number): Promise<'master' | 'linked' | 'unlinked' | null> {
  const replication = await call(port, 'INFO', 'replication').catch(() => null);
  if (typeof replication !== 'string') return null;
  const fields = parseInfo(replication);
  if (fields.role === 'master') return 'master';
  return fields.master_link_status === 'up' ? 'linked' : 'unlinked';
}

interface ParsedNode extends ClusterPrimary {
  primary: boolean;
  failed: boolean;
  masterId: string | null;
}

/** Lines of `CLUSTER NODES`: `id ip:port@cport flags master ping pong epoch link slot…`. */
function parseClusterNodes(text: string): ParsedNode[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id, address, flags, master, , , , , ...slotFields] = line.trim().split(' ');
      const [host, rest] = address!.split(':');
      const flagSet = new Set(flags!.split(','));
      const slots = slotFields
        .filter((field) => !field.startsWith('['))
        .map((field): [number, number] => {
          const [from, to] = field.split('-').map(Number);
          return [from!, to ?? from!];
        });
      return { id: id!, host: host!, port: Number(rest!.split('@')[0]), primary: flagSet.has('master'), failed: flagSet.has('fail') || flagSet.has('noaddr'), masterId: master === '-' ? null : master!, slots };
    });
}

function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return fields;
}

async function runCli(args: string[], deadlineMs: number): Promise<string> {
  const child = spawn(CLI_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (exitCode) => resolve(exitCode));
  }).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`${CLI_BIN} ${args.join(' ')} failed (${code}):\n${output}`);
  return output;
}

/** Polls `check` every 50 ms until it is true; fails with `what` and the log after `deadlineMs`. */
async function until(deadlineMs: number, what: string, log: () => string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: not within ${deadlineMs} ms: ${what}\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `count` ports whose cluster-bus port (+10000) is free too. Chosen in 15000–22767, so the bus
 * port stays below Linux's ephemeral range (32768+) and an outgoing connection cannot take it.
 */
async function freePortPairs(count: number): Promise<number[]> {
  const chosen: number[] = [];
  for (let attempt = 0; chosen.length < count; attempt++) {
    if (attempt > 500) throw new Error('no free loopback port pairs (p, p+10000) in 15000–22767');
    const port = 15_000 + Math.floor(Math.random() * 7_768);
    if (chosen.includes(port)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) chosen.push(port);
  }
  return chosen;
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, HOST, () => probe.close(() => resolve(true)));
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

async function stopProcess(proc: NodeProcess): Promise<void> {
  proc.alive = false;
  if (proc.child.pid === undefined || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  signalGroup(proc.child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(proc.child, 'SIGKILL'), 3_000);
  await proc.exited;
  clearTimeout(timer);
}

function onPath(bin: string): boolean {
  if (bin.includes('/')) return existsSync(bin);
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, bin)));
}

function onceOnly(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}
