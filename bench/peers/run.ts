/**
 * The peers benchmark (issue 38): every system of `bench/peers/systems/*.ts` (not `*.check.ts`; a
 * module whose default export is not a `PeerSystem` is ignored, one that fails to import is reported
 * as skipped) on the standard input, scripted model then the real `openai` SDK against the fake server
 * (its own process), several rounds with the system order rotated, medians; writes
 * `bench/results/peers.json`. See README.md here. Sizes: PEERS_INPUTS (1000), PEERS_SWEEP_INPUTS (500),
 * PEERS_ROUNDS (3), PEERS_LATENCY_SECONDS (3), PEERS_FLOOR_INPUTS (5000), PEERS_HOPS_ITERATIONS (300),
 * PEERS_DEADLINE_MS (570000); PEERS_ONLY=a,b picks systems.
 *
 * Round 0 sweeps every system's settings (saturation only, PEERS_SWEEP_INPUTS inputs) and keeps the
 * best point per model kind; it only chooses. Rounds 1…PEERS_ROUNDS are measured: the best point's
 * saturation (PEERS_INPUTS), then (scripted) the two open-loop latency phases on the same processes —
 * 20 inputs/s and half the saturation that run just measured. Medians are over the measured rounds.
 */
import { execFileSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Redis } from 'ioredis';
import { ADMIN_URL, cleanupAll, REDIS_URL } from '../lib/fleet.js';
import { startStandardOpenAiServerProcess, type OpenAiServerProcess } from '../lib/openai-fake-process.js';
import { startProducerProcess } from '../lib/producer-process.js';
import { median, round } from '../lib/stats.js';
import type { HarnessSystem } from './lib/extras.js';
import { compositeFloor, dispatchHops, type CompositeFloor } from './lib/floors-run.js';
import { figures, targets, type KindFigures, type KindRecord } from './lib/summary.js';
import { failCurrentRun, runSystem } from './lib/system-run.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const INPUTS = env('PEERS_INPUTS', 1000);
const ROUNDS = Math.max(1, env('PEERS_ROUNDS', 3));
/** Round 0 (the sweep) only chooses each system's settings: half-size runs keep the whole run within 10 minutes. */
const SWEEP_INPUTS = env('PEERS_SWEEP_INPUTS', 500);
/** Inputs run on each fresh worker before its measured phase (steady state: JIT, pools, caches); not timed. */
const WARMUP_INPUTS = env('PEERS_WARMUP_INPUTS', 400);
const LATENCY_SECONDS = env('PEERS_LATENCY_SECONDS', 3);
const FLOOR_INPUTS = env('PEERS_FLOOR_INPUTS', 5000);
const HOPS_ITERATIONS = env('PEERS_HOPS_ITERATIONS', 300);
const DEADLINE_MS = env('PEERS_DEADLINE_MS', 570_000);
const SESSIONS = 200;
const PRODUCER_CONCURRENCY = 64;
const LOW_RATE = 20;
const RUN_TIMEOUT_MS = env('PEERS_RUN_TIMEOUT_MS', 90_000);
const SYSTEMS_DIR = new URL('./systems/', import.meta.url);
/** PEERS_OUT: another file for a trial run (relative to the working directory), so it does not replace the committed result. */
const OUT = process.env['PEERS_OUT'] ? new URL(process.env['PEERS_OUT'], `file://${process.cwd()}/`) : new URL('../results/peers.json', import.meta.url);
type Kind = 'scripted' | 'openai';

const startedAt = new Date();
const skipped: Record<string, string> = {};
const records: Record<string, Partial<Record<Kind, KindRecord>>> = {};
const floors: CompositeFloor[] = [];
let hops: Record<string, unknown> | null = null;
let roundsRun = 0;
/** Uncaught errors outside any system's run. */
const strayErrors: string[] = [];
const systems: Array<{ system: HarnessSystem; path: string }> = [];
const log = (text: string) => console.error(`[peers ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)}s] ${text}`);

async function loadSystems(): Promise<void> {
  const only = process.env['PEERS_ONLY']?.split(',').map((name) => name.trim()).filter(Boolean);
  const files = (await readdir(SYSTEMS_DIR)).filter((file) => file.endsWith('.ts') && !file.endsWith('.check.ts') && !file.endsWith('.d.ts')).sort();
  for (const file of files) {
    const stem = file.slice(0, -3);
    if (only !== undefined && !only.includes(stem)) continue;
    const path = fileURLToPath(new URL(file, SYSTEMS_DIR));
    try {
      const system = (await import(path)).default as HarnessSystem | undefined;
      // Helper modules of a system (e.g. restate-service.ts) are not systems.
      if (system === undefined || typeof system.startWorker !== 'function' || typeof system.setup !== 'function') continue;
      systems.push({ system, path });
    } catch (error) {
      skipped[stem] = error instanceof Error ? error.message.slice(0, 500) : String(error);
      log(`skipped ${stem}: ${skipped[stem]}`);
    }
  }
}

/** The version of the node binary a system's worker and producer processes run on. */
function nodeVersion(binary: string | undefined): string {
  if (binary === undefined) return process.version;
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch (error) {
    return `unknown (${String(error).slice(0, 100)})`;
  }
}

async function serviceVersions(): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  const postgres = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v ?? 'unknown';
  await client.end();
  const redis = new Redis(REDIS_URL);
  const info = await redis.info('server');
  redis.disconnect();
  return { postgres, redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown' };
}

async function result(services: Record<string, string>, complete: boolean): Promise<Record<string, unknown>> {
  const all: Record<string, Partial<Record<Kind, KindFigures>>> = {};
  for (const [name, kinds] of Object.entries(records)) for (const [kind, record] of Object.entries(kinds)) (all[name] ??= {})[kind as Kind] = figures(record);
  const floor = floors.length === 0 ? null : (Object.fromEntries(Object.keys(floors[0]!).map((key) => [key, round(median(floors.map((f) => f[key as keyof CompositeFloor])), 3)])) as unknown as CompositeFloor);
  const pathSum = (hops?.['figures'] as { pathSumMs?: { p99?: number } } | undefined)?.pathSumMs;
  const summary = targets(all, floor, pathSum?.p99 ?? null);
  return {
    name: 'peers',
    date: startedAt.toISOString(),
    complete,
    durationS: round((Date.now() - startedAt.getTime()) / 1000, 0),
    machine: { cpuModel: cpus()[0]?.model ?? 'unknown', cpus: cpus().length, node: process.version, ...services },
    command: `npm run bench:peers${process.env['PEERS_ONLY'] ? ` (PEERS_ONLY=${process.env['PEERS_ONLY']})` : ''}`,
    sizes: { inputs: INPUTS, sessions: SESSIONS, producerConcurrency: PRODUCER_CONCURRENCY, sweepInputs: SWEEP_INPUTS, warmupInputs: WARMUP_INPUTS, measuredRounds: ROUNDS, measuredRoundsRun: roundsRun, latencySeconds: LATENCY_SECONDS, lowRate: LOW_RATE, floorInputs: FLOOR_INPUTS, hopsIterations: HOPS_ITERATIONS },
    notes: [
      'inputsPerSec: N inputs over 200 sessions added by the producer process (64 adds in flight, a session\'s adds chained), from the add command until peers:<runId>:finished reached N; median over the measured rounds (1…) of the point the sweep (round 0, sweepInputs per point, every figure under runs.<kind>.sweep) found best.',
      'cpuMsPerInput: /proc, by process over the saturation phase; orchestrator = the harness process (it polls the counter); other = machine minus every named process.',
      'latency: accept -> start (addedAt stamped by the producer just before the add; start = the input\'s started entry), open loops at 20/s and at half the saturation the same run just measured (same processes), in each measured round; p50/p99 medians over rounds (of 2 values: the lower).',
      'A run whose verify failed makes the figures invalid (valid: false).',
    ],
    skipped,
    strayErrors,
    systems: Object.fromEntries(systems.map(({ system }) => [system.name, { versions: system.versions(), workerNode: nodeVersion(system.nodeBinary), sweepPoints: system.sweep, figures: all[system.name] ?? {}, runs: records[system.name] ?? {} }])),
    floors: { composite: floor, perRound: floors, dispatchHops: hops === null ? null : { pathSumMs: pathSum, hops: (hops['figures'] as Record<string, unknown>)['hops'], floor: hops['floor'] } },
    ratios: summary.ratios,
    targets: summary.targets,
  };
}

async function main(): Promise<void> {
  const services = await serviceVersions();
  const deadline = setTimeout(() => {
    log(`deadline of ${DEADLINE_MS} ms reached: writing what was measured, stopping every child, dropping databases`);
    void (async () => {
      await writeFile(OUT, `${JSON.stringify(await result(services, false), null, 2)}\n`).catch(() => undefined);
      await cleanupAll();
      process.exit(2);
    })();
  }, DEADLINE_MS);
  deadline.unref();
  // What a system leaves uncaught (an 'error' event of a server it spawned, a stray rejection) fails its
  // run, not the harness.
  const stray = (error: unknown) => {
    log(`uncaught in the harness process: ${error instanceof Error ? (error.stack ?? error.message).slice(0, 600) : String(error)}`);
    if (!failCurrentRun(error)) strayErrors.push(String(error).slice(0, 500));
  };
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
  // Interrupted: children stopped, databases dropped (they are registered with onCleanup).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanupAll().finally(() => process.exit(130)));
  await loadSystems();
  log(`systems: ${systems.map(({ system }) => system.name).join(', ') || 'none'}`);
  const redis = new Redis(REDIS_URL);
  const needsOpenAi = systems.some(({ system }) => (system.modelKinds ?? ['scripted', 'openai']).includes('openai'));
  let fake: OpenAiServerProcess | null = null;
  const floorProducer = await startProducerProcess();
  try {
    if (needsOpenAi) fake = await startStandardOpenAiServerProcess();
    hops = await dispatchHops(HOPS_ITERATIONS, 60_000).catch((error: unknown) => (log(String(error)), null));
    log('dispatch hops measured');
    let roundStarted = performance.now();
    for (let r = 0; r <= ROUNDS; r += 1) {
      // A round like the last one must fit before the deadline (with room for the report), or the run ends here, complete.
      const lastRound = performance.now() - roundStarted;
      roundStarted = performance.now();
      if (r >= 2 && Date.now() - startedAt.getTime() + lastRound > DEADLINE_MS - 15_000) {
        log(`round ${r} would not end before the deadline (the last took ${Math.round(lastRound / 1000)} s): stopping after ${roundsRun} measured rounds`);
        break;
      }
      const order = [...systems.slice(r % systems.length), ...systems.slice(0, r % systems.length)];
      for (const { system, path } of order) {
        for (const kind of system.modelKinds ?? (['scripted', 'openai'] as const)) {
          const record = ((records[system.name] ??= {})[kind] ??= { sweep: [], best: null, rounds: [], errors: [] });
          if (r > 0 && record.best === null) continue;
          const points = r === 0 ? system.sweep : [record.best!];
          const plan = (settings: Record<string, string | number>, latency: boolean, inputs = INPUTS) => ({
            system, systemPath: path, modelKind: kind, openaiBaseUrl: kind === 'openai' ? fake?.url : undefined, settings, inputs, warmupInputs: WARMUP_INPUTS, sessions: SESSIONS,
            producerConcurrency: PRODUCER_CONCURRENCY, lowRate: latency ? LOW_RATE : null, latencySeconds: LATENCY_SECONDS,
            extraPids: (kind === 'openai' && fake !== null ? { llmServer: fake.pid } : {}) as Record<string, number>, timeoutMs: RUN_TIMEOUT_MS,
          });
          const runs: Array<Awaited<ReturnType<typeof runSystem>> | null> = [];
          for (const settings of points) {
            try {
              const run = await runSystem(plan(settings, r > 0 && kind === 'scripted', r === 0 ? SWEEP_INPUTS : INPUTS), redis);
              runs.push(run);
              if (r === 0) record.sweep.push({ settings, inputsPerSec: run.inputsPerSec, verifyOk: run.verify.ok });
              log(`round ${r} ${system.name} ${kind} ${JSON.stringify(settings)}: ${run.inputsPerSec} inputs/s, machine ${run.cpuMsPerInput['machine']} ms/input, verify ${run.verify.ok ? 'ok' : run.verify.problems.slice(0, 3).join('; ')}${run.latency.map((l) => `, ${l.rate}/s p50 ${l.p50} p99 ${l.p99}`).join('')} ${JSON.stringify(run.timingsMs)}`);
            } catch (error) {
              const message = error instanceof Error ? error.message.slice(0, 1000) : String(error);
              runs.push(null);
              record.errors.push(`round ${r} ${JSON.stringify(settings)}: ${message}`);
              if (r === 0) record.sweep.push({ settings, inputsPerSec: null, verifyOk: false, error: message });
              log(`round ${r} ${system.name} ${kind} ${JSON.stringify(settings)} failed: ${message}`);
            }
          }
          if (r === 0) {
            // The best valid point (verify ok), else the best that ran at all.
            const ran = runs.map((run, i) => ({ run, i })).filter((x): x is { run: NonNullable<typeof x.run>; i: number } => x.run !== null);
            const pick = [...ran.filter((x) => x.run.verify.ok), ...ran].sort((a, b) => Number(b.run.verify.ok) - Number(a.run.verify.ok) || b.run.inputsPerSec - a.run.inputsPerSec)[0];
            if (pick !== undefined) {
              record.best = points[pick.i]!;
            }
          } else if (runs[0]) record.rounds.push(runs[0]);
        }
      }
      if (r > 0) roundsRun = r;
      try {
        floors.push(await compositeFloor(redis, floorProducer, FLOOR_INPUTS));
        log(`round ${r} floors: ${JSON.stringify(floors.at(-1))}`);
      } catch (error) {
        log(`round ${r} floors failed: ${String(error)}`);
      }
    }
    const out = await result(services, true);
    await writeFile(OUT, `${JSON.stringify(out, null, 2)}\n`);
    console.log(JSON.stringify({ figures: Object.fromEntries(Object.entries(out['systems'] as Record<string, { figures: unknown }>).map(([k, v]) => [k, v.figures])), floors: (out['floors'] as { composite: unknown }).composite, targets: out['targets'], skipped }, null, 2));
    log(`wrote ${fileURLToPath(OUT)}`);
  } finally {
    clearTimeout(deadline);
    await fake?.close();
    await floorProducer.close();
    redis.disconnect();
    await cleanupAll();
  }
}

await main();
process.exit(0);
