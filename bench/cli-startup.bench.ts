/**
 * How long the built `loopfleet` command takes as a whole process, against `node -e 1` timed in the
 * same run (alternating, so drift in the machine's speed hits both alike): `version`, `help`,
 * `send --help`, and `history` of a real session on a bench database. Needs `npm run build` first.
 * Targets: `version` and `help` at most twice `node -e 1`; `history` at most 0.5 s plus its own query.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createPgPool } from '../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../src/store/postgres-session-store.js';
import { startWorker } from '../src/worker/start-worker.js';
import { benchConfig, cleanupAll, createBenchDatabase, deleteQueueKeys, REDIS_URL, silentLogger, uniqueName } from './lib/fleet.js';
import { median, report, round } from './lib/stats.js';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);
const SESSION = 'bench-cli';
const MESSAGES = 20;

/** Wall time of one whole process, in ms; fails on a non-zero exit. */
function timeProcess(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: Object.assign({ PATH: process.env.PATH }, env), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`))));
  });
}

if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: run npm run build first');
const db = await createBenchDatabase('cli');
const queueName = uniqueName('cli');
const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName });
const env = { DATABASE_URL: db.url, REDIS_URL, LOOPFLEET_QUEUE: queueName };
const redis = new Redis(REDIS_URL);
try {
  // A real session: MESSAGES/2 inputs answered by a worker (scripted model), read back by history.
  const worker = await startWorker(config, { logger: silentLogger() });
  for (let i = 1; i <= MESSAGES / 2; i += 1) await timeProcess([CLI, 'send', SESSION, `message ${i}`], env);
  await timeProcess([CLI, 'result', SESSION, String(MESSAGES / 2), '--wait', '60s'], env);
  await worker.close({ graceMs: 1000 });

  // The history query alone, in this process on a warm pool: what history must do besides starting.
  const pool = createPgPool(db.url);
  const store = new PostgresSessionStore(pool);
  await store.loadHistory(SESSION);
  const queryMs: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    await store.getSession(SESSION);
    await store.loadHistory(SESSION, { afterSeq: 0, limit: 1000 });
    queryMs.push(performance.now() - started);
  }
  await pool.end();

  const commands: Record<string, string[]> = { version: [CLI, 'version'], help: [CLI, 'help'], 'send --help': [CLI, 'send', '--help'], history: [CLI, 'history', SESSION] };
  const samples: Record<string, number[]> = { 'node -e 1': [] };
  for (const name of Object.keys(commands)) samples[name] = [];
  for (let run = 0; run < RUNS + 1; run += 1) {
    for (const [name, args] of Object.entries(commands)) {
      const baseline = await timeProcess(['-e', '1'], env);
      const ms = await timeProcess(args, env);
      // The first round warms the disk cache: not counted.
      if (run === 0) continue;
      samples['node -e 1']!.push(baseline);
      samples[name]!.push(ms);
    }
  }
  const medians = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, round(median(values), 1)]));
  const node = medians['node -e 1']!;
  const query = round(median(queryMs), 1);
  await report({
    name: 'cli-startup',
    command: 'node --import tsx bench/cli-startup.bench.ts',
    runs: RUNS,
    historyMessages: MESSAGES,
    medianMs: medians,
    ratioToNode: Object.fromEntries(Object.entries(medians).map(([name, ms]) => [name, round(ms / node, 2)])),
    historyQueryMs: query,
    samplesMs: Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, values.map((value) => round(value, 1))])),
    targets: [
      { target: 'version ≤ 2× node -e 1', value: round(medians.version! / node, 2), met: medians.version! <= 2 * node },
      { target: 'help ≤ 2× node -e 1', value: round(medians.help! / node, 2), met: medians.help! <= 2 * node },
      { target: 'history ≤ 500 ms + its query', value: medians.history!, met: medians.history! <= 500 + query },
    ],
  });
} finally {
  await deleteQueueKeys(redis, queueName);
  redis.disconnect();
  await db.drop();
  await cleanupAll();
}
