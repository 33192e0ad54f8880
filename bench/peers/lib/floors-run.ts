/**
 * The references measured in the same run: the composite floor `1 / (1/BullMQ + 1/Postgres + 1/XADD)`
 * (the three raw costs an input cannot avoid, in series, measured with `bench/lib/floors.ts` as
 * `throughput.bench.ts` measures them: BullMQ no-op jobs added by a producer process; Postgres
 * transactions as many per input, with as many statements, as loopfleet's last committed
 * `bench/results/throughput.json` counted; 28 pipelined XADDs per input), and the raw dispatch hops
 * (`bench/dispatch-hops.bench.ts`, run as a child; its committed result file is left as it was).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Redis } from 'ioredis';
import { ADMIN_URL, onCleanup, REDIS_URL } from '../../lib/fleet.js';
import { bullmqFloor, postgresFloor, xaddFloor } from '../../lib/floors.js';
import type { ProducerProcess } from '../../lib/producer-process.js';
import { quoteIdent } from '../../../src/store/postgres/migrate.js';
import { round } from '../../lib/stats.js';

/** throughput.bench.ts uses 50; this Postgres (max_connections 100) is shared with the systems' own pools and other benches. */
const POSTGRES_FLOOR_POOL = 20;
const THROUGHPUT_JSON = new URL('../../results/throughput.json', import.meta.url);
const HOPS_JSON = new URL('../../results/dispatch-hops.json', import.meta.url);
const HOPS_BENCH = fileURLToPath(new URL('../../dispatch-hops.bench.ts', import.meta.url));

export interface CompositeFloor {
  bullmqJobsPerSec: number;
  postgresInputsPerSec: number;
  xaddInputsPerSec: number;
  compositeInputsPerSec: number;
  pgWriteCommitsPerInput: number;
  pgStatementsPerInput: number;
}

async function loopfleetPgCounts(): Promise<{ commits: number; statements: number }> {
  try {
    const perInput = (JSON.parse(await readFile(THROUGHPUT_JSON, 'utf8')) as { perInput: { scripted: Record<string, number> } }).perInput.scripted;
    return { commits: perInput['pgWriteCommits'] ?? 0.13, statements: perInput['pgStatements'] ?? 0.18 };
  } catch {
    return { commits: 0.13, statements: 0.18 };
  }
}

export async function compositeFloor(redis: Redis, producer: ProducerProcess, n: number): Promise<CompositeFloor> {
  const counts = await loopfleetPgCounts();
  const name = `peers_floor_${randomBytes(4).toString('hex')}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${quoteIdent(name)}`);
  const drop = () => admin(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  // Dropped below; if that fails, by the exit's cleanupAll.
  const unregister = onCleanup(drop);
  try {
    const bullmqMs = await bullmqFloor(REDIS_URL, n, 128, 64, producer);
    const postgresMs = await postgresFloor(url.toString(), n, counts.commits, counts.statements / counts.commits, POSTGRES_FLOOR_POOL, 128);
    const xaddMs = await xaddFloor(redis, n, 28, 200, 128);
    const rate = (ms: number) => n / (ms / 1000);
    const composite = 1 / (1 / rate(bullmqMs) + 1 / rate(postgresMs) + 1 / rate(xaddMs));
    return {
      bullmqJobsPerSec: round(rate(bullmqMs), 0),
      postgresInputsPerSec: round(rate(postgresMs), 0),
      xaddInputsPerSec: round(rate(xaddMs), 0),
      compositeInputsPerSec: round(composite, 0),
      pgWriteCommitsPerInput: counts.commits,
      pgStatementsPerInput: counts.statements,
    };
  } finally {
    await drop().then(unregister, () => undefined);
  }
}

/** The raw hops of the dispatch path: `dispatch-hops.bench.ts`'s JSON (its committed file restored after). */
export async function dispatchHops(iterations: number, timeoutMs: number): Promise<Record<string, unknown>> {
  const saved = await readFile(HOPS_JSON, 'utf8').catch(() => null);
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', HOPS_BENCH], { env: { ...process.env, BENCH_HOPS_ITERATIONS: String(iterations) }, timeout: timeoutMs, maxBuffer: 1 << 24 }, (error, out, err) =>
        error ? reject(new Error(`dispatch-hops: ${error.message}; ${err.slice(-2000)}`)) : resolve(out));
    });
    return JSON.parse(stdout.slice(stdout.indexOf('{'))) as Record<string, unknown>;
  } finally {
    if (saved !== null) await writeFile(HOPS_JSON, saved);
  }
}
