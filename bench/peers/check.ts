/**
 * Runs one system end to end in this process, without the harness: a fresh database, setup, a
 * worker, a producer, `PEERS_CHECK_INPUTS` inputs (default 200) over 20 sessions, until each input's
 * `finished` entries are written, then verify and teardown. Prints inputs/s and the verify result.
 * A system that names its own node binary is run with it:
 *
 *   npx tsx bench/peers/check.ts graphile-worker [scripted|openai] [settings JSON]
 *   bench/peers/node_modules/node/bin/node --import tsx bench/peers/check.ts pg-boss
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startStandardOpenAiServerProcess } from '../lib/openai-fake-process.js';
import { createStandardModel, finishedKey } from './lib/standard.js';
import type { PeerContext, PeerSystem } from './lib/system.js';

const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function main(): Promise<void> {
  const [name, kind = 'scripted', settingsJson] = process.argv.slice(2);
  if (name === undefined) throw new Error('usage: check.ts <system> [scripted|openai] [settings JSON]');
  const system = (await import(`./systems/${name}.ts`)).default as PeerSystem;
  const n = Number(process.env.PEERS_CHECK_INPUTS ?? 200);
  const sessions = 20;
  const runId = `check_${name.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const database = `peers_${runId}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const pgUrl = new URL(ADMIN_URL);
  pgUrl.pathname = `/${database}`;
  const fake = kind === 'openai' ? await startStandardOpenAiServerProcess() : null;
  const ctx: PeerContext = {
    pgUrl: pgUrl.toString(),
    redisUrl: REDIS_URL,
    runId,
    modelKind: kind === 'openai' ? 'openai' : 'scripted',
    ...(fake ? { openaiBaseUrl: fake.url } : {}),
    settings: settingsJson ? (JSON.parse(settingsJson) as Record<string, string | number>) : (system.sweep[0] ?? {}),
  };
  const redis = new Redis(REDIS_URL);
  try {
    await system.setup(ctx);
    const worker = await system.startWorker(ctx, await createStandardModel(ctx.modelKind, ctx.openaiBaseUrl));
    const producer = await system.createProducer(ctx);
    const expected = new Map<string, string[]>();
    const started = performance.now();
    // Each session's adds one after another (each awaited), the sessions side by side: add order per session is defined.
    const adders = Array.from({ length: sessions }, async (_, s) => {
      const sessionId = `s${s}`;
      const list: string[] = [];
      expected.set(sessionId, list);
      for (let i = s; i < n; i += sessions) {
        list.push(`in-${i}`);
        await producer.add({ sessionId, inputId: `in-${i}`, text: `standard input ${i}: please call noop`, addedAt: Date.now() });
      }
    });
    await Promise.all(adders);
    const deadline = Date.now() + 120_000;
    while (Number((await redis.get(finishedKey(runId))) ?? 0) < n) {
      if (Date.now() > deadline) throw new Error(`only ${await redis.get(finishedKey(runId))} of ${n} finished in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ms = performance.now() - started;
    await producer.close();
    await worker.stop();
    const verified = await system.verify(ctx, expected);
    console.log(JSON.stringify({ system: name, kind, settings: ctx.settings, inputs: n, inputsPerSec: Math.round(n / (ms / 1000)), verified, versions: system.versions() }));
    await system.teardown(ctx);
  } finally {
    redis.disconnect();
    await fake?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    const cleanup = new Redis(REDIS_URL);
    const keys = await cleanup.keys(`peers:${runId}:*`);
    if (keys.length > 0) await cleanup.del(...keys);
    cleanup.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
