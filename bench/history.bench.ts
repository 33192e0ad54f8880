/**
 * History independence: the cost of one standard input (scripted provider) in a session with 10
 * messages of history vs one with 10,000 — compacted (9,990 folded, 10 active: the window compaction
 * leaves) and uncompacted (10,000 active: the whole history is the window). Histories are seeded with
 * SQL. Compaction is kept from triggering (context budget 10 M tokens) so every variant runs the same
 * steps. Inputs run one at a time, variants interleaved; per-input wall time (accept → final commit)
 * and process CPU per input, medians. The 10-message variant is the floor.
 *
 * 64 measured inputs per variant: with 16, the uncompacted ratio read 1.02–1.24 over six runs of one
 * hour (a few milliseconds per input, one input at a time, so single slow inputs move a median of 16);
 * with 64 it read 1.09–1.11 over four (bench/history/log-to-session-30.md, item 32), for about a second more.
 *
 * Run alone: `npx tsx bench/history.bench.ts` (BENCH_HISTORY_ROUNDS, default 64).
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { SessionQueue } from '../src/producer/session-queue.js';
import { benchConfig, cleanupAll, createBenchDatabase, deleteQueueKeys, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { cpuMs, deadline, median, report, round } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_HISTORY_ROUNDS ?? 64);
const SESSIONS_PER_VARIANT = 4;
const LARGE = 10_000;
const VARIANTS = [
  { name: 'small10', messages: 10, active: 10 },
  { name: 'large10kCompacted', messages: LARGE, active: 10 },
  { name: 'large10kUncompacted', messages: LARGE, active: LARGE },
] as const;

async function seed(db: pg.Client, sessionId: string, messages: number, active: number): Promise<void> {
  await db.query('INSERT INTO sessions (id, next_message_seq) VALUES ($1, $2)', [sessionId, messages]);
  await db.query(
    `INSERT INTO messages (session_id, seq, role, kind, content, state)
     SELECT $1, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, 'message',
            to_jsonb('history message ' || g || ' with a few words of text in it'),
            CASE WHEN g > $2::bigint - $3::bigint THEN 'active' ELSE 'compacted' END
       FROM generate_series(1, $2::bigint) AS g`,
    [sessionId, messages, active],
  );
}

async function main(): Promise<void> {
  const stop = deadline(200_000, 'history bench');
  const db = await createBenchDatabase('hist');
  const queueName = uniqueName('hist');
  const redis = new Redis(REDIS_URL);
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const counter = new FinishCounter();
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: '16' });
  const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm: new StandardScriptedLlm(), profile: { contextBudgetTokens: 10_000_000 } });
  try {
    for (const variant of VARIANTS) {
      for (let s = 0; s < SESSIONS_PER_VARIANT; s += 1) await seed(admin, `${variant.name}-${s}`, variant.messages, variant.active);
    }
    await admin.query('ANALYZE');
    const wall: Record<string, number[]> = Object.fromEntries(VARIANTS.map((v) => [v.name, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(VARIANTS.map((v) => [v.name, []]));
    const one = async (sessionId: string) => {
      const c0 = cpuMs();
      const t0 = performance.now();
      const target = counter.finished + 1;
      await producer.add('send', { sessionId, input: 'one more input: please call noop' });
      await counter.waitFor(target, 60_000);
      return { ms: performance.now() - t0, cpu: cpuMs() - c0 };
    };
    // Warm-up: one input per session (loads each session once; not measured).
    for (const variant of VARIANTS) for (let s = 0; s < SESSIONS_PER_VARIANT; s += 1) await one(`${variant.name}-${s}`);
    for (let r = 0; r < ROUNDS; r += 1) {
      const order = r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        const result = await one(`${variant.name}-${r % SESSIONS_PER_VARIANT}`);
        wall[variant.name]!.push(result.ms);
        cpu[variant.name]!.push(result.cpu);
      }
    }
    const medians = Object.fromEntries(VARIANTS.map((v) => [v.name, { wallMs: round(median(wall[v.name]!), 2), cpuMs: round(median(cpu[v.name]!), 2) }]));
    const base = medians['small10']!;
    const compacted = medians['large10kCompacted']!;
    const uncompacted = medians['large10kUncompacted']!;
    stop();
    await report({
      name: 'history',
      command: 'npx tsx bench/history.bench.ts',
      runs: ROUNDS,
      sizes: { sessionsPerVariant: SESSIONS_PER_VARIANT, measuredInputsPerVariant: ROUNDS, variants: VARIANTS },
      figures: { perInput: medians },
      floor: { small10: base },
      ratio: {
        compactedWall: round(compacted.wallMs / base.wallMs, 3),
        compactedCpu: round(compacted.cpuMs / base.cpuMs, 3),
        uncompactedWall: round(uncompacted.wallMs / base.wallMs, 3),
        uncompactedCpu: round(uncompacted.cpuMs / base.cpuMs, 3),
      },
      targets: [
        { target: 'per-input overhead at 10,000 messages (compacted) <= 1.2x that at 10 (wall)', value: round(compacted.wallMs / base.wallMs, 3), met: compacted.wallMs / base.wallMs <= 1.2 },
        { target: 'per-input overhead at 10,000 messages (uncompacted) <= 1.2x that at 10 (wall)', value: round(uncompacted.wallMs / base.wallMs, 3), met: uncompacted.wallMs / base.wallMs <= 1.2 },
      ],
    });
  } finally {
    await worker.close({ graceMs: 5_000 });
    await producer.close();
    await admin.end();
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
    await db.drop();
    await cleanupAll();
  }
}

await main();
