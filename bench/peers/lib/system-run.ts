/**
 * One system run: a fresh database (`peers_<system>_<random>`), `setup`, a worker process and a
 * producer process, the saturation phase, optionally the two open-loop latency phases, `verify`,
 * `teardown`, the database dropped — whatever fails, with every step bounded in time.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Redis } from 'ioredis';
import { ADMIN_URL, deleteMatchingKeys, onCleanup, REDIS_URL } from '../../lib/fleet.js';
import { WORKER_NODE_FLAGS } from '../../../src/worker/young-generation.js';
import { quoteIdent } from '../../../src/store/postgres/migrate.js';
import { round } from '../../lib/stats.js';
import { startPeerChild, type PeerChild } from './child.js';

/**
 * PEERS_WORKER_NODE_ARGS: more node flags for every worker process, space-separated, for looking
 * into a run (`--cpu-prof --cpu-prof-dir=/tmp/prof`), never for committed figures.
 */
const PROFILE_FLAGS = (process.env['PEERS_WORKER_NODE_ARGS'] ?? '').split(' ').filter((flag) => flag !== '');
import { plannedInput, type AddedInput, type HarnessSystem } from './extras.js';
import { cpuSplit, finishedCount, latency, peakRssMb, snapshot, waitFinished, type Latency, type Pids } from './measure.js';
import { startsKey } from './standard.js';
import type { PeerContext, VerifyResult } from './system.js';

const WORKER_MAIN = fileURLToPath(new URL('./worker-main.ts', import.meta.url));
const PRODUCER_MAIN = fileURLToPath(new URL('./producer-main.ts', import.meta.url));

export interface RunPlan {
  system: HarnessSystem;
  systemPath: string;
  modelKind: PeerContext['modelKind'];
  openaiBaseUrl: string | undefined;
  settings: Record<string, string | number>;
  inputs: number;
  /** Inputs run first on the fresh processes, untimed, so the measured phase sees a warm worker. */
  warmupInputs: number;
  sessions: number;
  producerConcurrency: number;
  /**
   * Open-loop phases after the saturation phase: at this fixed rate, then at half the saturation just
   * measured (the system's own, same processes, same machine state); null for none.
   */
  lowRate: number | null;
  latencySeconds: number;
  /** Pids measured besides the run's own (the fake model server). */
  extraPids: Pids;
  timeoutMs: number;
}

export interface RunResult {
  settings: Record<string, string | number>;
  inputsPerSec: number;
  ms: number;
  cpuMsPerInput: Record<string, number | null>;
  peakRssMb: Record<string, number | null>;
  latency: Array<{ rate: number; achievedRate: number } & Latency>;
  verify: VerifyResult & { finished: number; added: number };
  timingsMs: Record<string, number>;
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Fails the run in progress: the harness process calls it with an error nothing else caught (a system's
 * `setup` spawning a server that emits an unhandled 'error', a stray rejection), so the run ends now
 * with that error instead of waiting out its time bounds — and the harness goes on with the next.
 */
let abortCurrent: ((error: Error) => void) | null = null;

export function failCurrentRun(error: unknown): boolean {
  if (abortCurrent === null) return false;
  abortCurrent(error instanceof Error ? error : new Error(String(error)));
  return true;
}

let aborted: Promise<never> = new Promise<never>(() => undefined);

async function bounded<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, aborted, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}


export async function runSystem(plan: RunPlan, redis: Redis): Promise<RunResult> {
  const { system } = plan;
  const tag = randomBytes(4).toString('hex');
  const dbName = `peers_${system.name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${tag}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const ctx: PeerContext = { pgUrl: url.toString(), redisUrl: REDIS_URL, runId: `${system.name.replace(/[^a-z0-9]/gi, '').slice(0, 12)}${tag}`, modelKind: plan.modelKind, settings: { ...plan.settings } };
  // (A copy: `setup` may add to its settings what the worker and producer need, e.g. a server's URLs.)
  if (plan.openaiBaseUrl !== undefined) ctx.openaiBaseUrl = plan.openaiBaseUrl;
  const timings: Record<string, number> = {};
  const t = (name: string, since: number) => (timings[name] = Math.round(performance.now() - since));
  const children: PeerChild<unknown>[] = [];
  let setUp = false;
  aborted = new Promise<never>((_, reject) => (abortCurrent = reject));
  aborted.catch(() => undefined);
  await admin(`CREATE DATABASE ${quoteIdent(dbName)}`);
  const drop = () => admin(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`);
  const unregister = onCleanup(drop);
  try {
    let since = performance.now();
    const { serverPids } = await bounded('setup', 120_000, system.setup(ctx));
    setUp = true;
    t('setup', since);
    since = performance.now();
    const childOptions = { ...(system.nodeBinary === undefined ? {} : { nodePath: system.nodeBinary }), startTimeoutMs: 90_000 };
    const [worker, producer] = await bounded('worker and producer start', 100_000, Promise.all([
      startPeerChild<{ pid: number }>(WORKER_MAIN, { systemPath: plan.systemPath, ctx }, { name: `${system.name} worker`, nodeArgs: [...WORKER_NODE_FLAGS, ...PROFILE_FLAGS], ...childOptions }),
      startPeerChild<{ pid: number }>(PRODUCER_MAIN, { systemPath: plan.systemPath, ctx }, { name: `${system.name} producer`, ...childOptions }),
    ]));
    children.push(worker, producer);
    t('spawn', since);
    const pids: Pids = { worker: worker.pid, producer: producer.pid, ...plan.extraPids };
    serverPids.forEach((pid, i) => (pids[serverPids.length === 1 ? 'server' : `server${i}`] = pid));
    const expected = new Map<string, string[]>();
    const record = (added: readonly AddedInput[]) => {
      for (const input of added) (expected.get(input.sessionId) ?? expected.set(input.sessionId, []).get(input.sessionId)!).push(input.inputId);
    };
    const toAdded = (rows: Array<[string, string, number]>): AddedInput[] => rows.map(([inputId, sessionId, addedAt]) => ({ inputId, sessionId, addedAt }));
    let total = 0;

    // Warm-up: a worker process is fresh here, where a deployed one is long-lived; its first inputs pay
    // for JIT compilation, pools and caches. The same untimed batch for every system (verified too).
    if (plan.warmupInputs > 0) {
      since = performance.now();
      const warm = producer.request<{ added: Array<[string, string, number]> }>({ type: 'batch', prefix: `warm${tag}`, n: plan.warmupInputs, sessions: plan.sessions, concurrency: plan.producerConcurrency }, plan.timeoutMs);
      warm.catch(() => undefined);
      total += plan.warmupInputs;
      await bounded('warm-up', plan.timeoutMs + 5_000, waitFinished(redis, ctx.runId, total, plan.timeoutMs));
      record(toAdded((await warm).added));
      t('warmup', since);
    }

    // Saturation: N inputs as fast as the producer adds them, from the command until the counter reaches N.
    const before = snapshot(pids);
    const started = performance.now();
    const batch = producer.request<{ added: Array<[string, string, number]> }>({ type: 'batch', prefix: `sat${tag}`, n: plan.inputs, sessions: plan.sessions, concurrency: plan.producerConcurrency }, plan.timeoutMs);
    // Awaited after the wait; a rejection while the wait fails (a time-out) must not go unhandled.
    batch.catch(() => undefined);
    total += plan.inputs;
    const finishedAt = await bounded('saturation', plan.timeoutMs + 5_000, waitFinished(redis, ctx.runId, total, plan.timeoutMs));
    const after = snapshot(pids);
    record(toAdded((await batch).added));
    const ms = finishedAt - started;
    timings['saturation'] = Math.round(ms);
    const inputsPerSec = round(plan.inputs / (ms / 1000), 1);

    // Open loops: accept → start at fixed rates, on fresh sessions.
    const latencies: RunResult['latency'] = [];
    const rates = plan.lowRate === null ? [] : [plan.lowRate, inputsPerSec / 2];
    for (const [k, rate] of rates.entries()) {
      since = performance.now();
      const n = Math.max(20, Math.round(rate * plan.latencySeconds));
      const startsFrom = await redis.llen(startsKey(ctx.runId));
      const loopStarted = performance.now();
      const loop = await bounded('open loop', plan.latencySeconds * 3000 + plan.timeoutMs + 5_000, producer.request<{ added: Array<[string, string, number]>; ms: number }>({ type: 'openLoop', prefix: `lat${k}${tag}`, n, sessions: plan.sessions, rate }, plan.latencySeconds * 3000 + plan.timeoutMs));
      total += n;
      await bounded('open loop finishes', plan.timeoutMs + 5_000, waitFinished(redis, ctx.runId, total, plan.timeoutMs));
      const added = toAdded(loop.added);
      record(added);
      const values = system.startLatencies !== undefined
        ? await system.startLatencies(ctx, added)
        : (await redis.lrange(startsKey(ctx.runId), startsFrom, -1)).map(Number);
      latencies.push({ rate: round(rate, 1), achievedRate: round(n / ((performance.now() - loopStarted) / 1000), 1), ...latency(values) });
      t(`latency${k}`, since);
    }

    since = performance.now();
    const finished = await finishedCount(redis, ctx.runId);
    const verified = await bounded('verify', 60_000, system.verify(ctx, expected));
    const verify = { ...verified, finished, added: total };
    if (finished !== total) verify.ok = false, verify.problems.push(`finished counter ${finished} for ${total} inputs added`);
    t('verify', since);
    const rss: Record<string, number | null> = { worker: peakRssMb(worker.pid) };
    serverPids.forEach((pid, i) => (rss[serverPids.length === 1 ? 'server' : `server${i}`] = peakRssMb(pid)));
    return { settings: plan.settings, inputsPerSec, ms: Math.round(ms), cpuMsPerInput: cpuSplit(before, after, plan.inputs), peakRssMb: rss, latency: latencies, verify, timingsMs: timings };
  } finally {
    abortCurrent = null;
    const since = performance.now();
    for (const child of children.reverse()) await child.close().catch(() => undefined);
    if (setUp) await bounded('teardown', 30_000, system.teardown(ctx)).catch((error: unknown) => console.error(`${system.name} teardown: ${String(error)}`));
    await deleteMatchingKeys(redis, `peers:${ctx.runId}:*`).catch(() => undefined);
    // Retried (Postgres may refuse connections for a moment: too many clients); left registered if it
    // still fails, so the exit's cleanupAll tries again.
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      try {
        await drop();
        unregister();
        break;
      } catch (error) {
        if (attempt === 5) console.error(`drop ${dbName}: ${String(error)}`);
        else await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      }
    }
    t('close', since);
  }
}
