/**
 * Each hop of the dispatch path (`add()` → `input_started`) alone, one at a time on an otherwise idle
 * machine, against the raw operation of the same kind measured in the same run — what the path costs
 * before any load queues it (`dispatch-stages.bench.ts` times the same hops under load):
 * - Postgres, through the store as the producer and the worker call it (the batcher, the statement,
 *   the row decoding): the accept (a new session each time), the lease with the first claim, and the
 *   lease's release; floors: `SELECT 1` (a round trip) and a one-row `INSERT` in its own transaction
 *   (a round trip and a durable commit: `synchronous_commit` and `fsync` on);
 * - Redis: one event published through `RedisEventPublisher` (the `input_accepted` and `input_started`
 *   writes: the publish script) and the kick (`kickSession`: BullMQ's deduplicated `add`); floors:
 *   `PING`, one `XADD`, and BullMQ's plain `add` of a job.
 * Every iteration runs each hop once, in an order rotated per iteration, so none always runs first;
 * percentiles over the iterations, after a warm-up. One operation at a time: a pool of two Postgres
 * connections, one Redis connection, and BullMQ's queue on one of its own.
 *
 * Run: `node --max-semi-space-size=32 --import tsx bench/dispatch-hops.bench.ts` (BENCH_HOPS_ITERATIONS,
 * default 500) — prints the JSON and writes bench/results/dispatch-hops.json.
 */
import { QueueShards } from '../src/fleet/queue-shards.js';
import { singleNodeLayout } from '../src/fleet/redis-layout.js';
import { Redis } from 'ioredis';
import { RedisEventPublisher } from '../src/events/event-publisher.js';
import { kickSession } from '../src/fleet/kick.js';
import { createPgPool } from '../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../src/store/postgres-session-store.js';
import { cleanupAll, createBenchDatabase, deleteQueueKeys, onCleanup, REDIS_URL, uniqueName } from './lib/fleet.js';
import { percentile, report, round } from './lib/stats.js';

const ITERATIONS = Number(process.env.BENCH_HOPS_ITERATIONS ?? 500);
const WARM_UP = 50;

type Hop = 'select1' | 'rawInsertCommit' | 'accept' | 'leaseAndClaim' | 'release' | 'ping' | 'xadd' | 'publishEvent' | 'kick' | 'bullmqAdd';
/** The hops of the dispatch path this bench times (it leaves out BullMQ's delivery and the subscriber's read). */
const PATH: readonly Hop[] = ['accept', 'publishEvent', 'kick', 'leaseAndClaim'];

const db = await createBenchDatabase('hops');
const pool = createPgPool(db.url, { maxConnections: 2 });
const store = new PostgresSessionStore(pool);
const queueName = uniqueName('hops');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
// BullMQ leaves a connection it was given open at close: closed below.
const queueConnection = redis.duplicate({ maxRetriesPerRequest: null });
const queue = QueueShards.open(singleNodeLayout(queueName), queueConnection);
const publisher = new RedisEventPublisher(redis, { queueName });
const unregister = onCleanup(async () => {
  await deleteQueueKeys(redis, queueName).catch(() => {});
});

try {
  await pool.query('CREATE TABLE raw_rows (id bigserial PRIMARY KEY, session_id text NOT NULL, payload jsonb NOT NULL)');
  const times = new Map<Hop, number[]>();
  /** Per iteration, the path's hops measured in it added up (one publish: the path has two). */
  const pathSums: number[] = [];
  /** One iteration: each hop once, starting at `rotation`; a fresh session for the accept, then its lease and release. */
  const iteration = async (i: number, record: boolean): Promise<void> => {
    const sessionId = `hop-${i}`;
    const payload = { text: 'hello' };
    let token: number | null = null;
    const hops: [Hop, () => Promise<unknown>][] = [
      ['select1', () => pool.query('SELECT 1')],
      ['rawInsertCommit', () => pool.query('INSERT INTO raw_rows (session_id, payload) VALUES ($1, $2)', [sessionId, JSON.stringify(payload)])],
      // The accept, lease and release of one session go in that order, wherever the rotation puts them.
      [
        'accept',
        async () => {
          await store.acceptInput({ sessionId, kind: 'send', payload, maxBytes: 1_000_000 });
        },
      ],
      ['ping', () => redis.ping()],
      ['xadd', () => redis.xadd(`${queueName}:raw:${i % 16}`, 'MAXLEN', '~', '1000', '*', 'type', 'round_started', 'data', '{"roundIndex":0}')],
      ['publishEvent', () => publisher.publish(sessionId, 1, { type: 'input_started', attempt: 1, agent: { name: 'default', version: 'v1' } })],
      ['kick', () => kickSession({ queue }, { sessionId, tenant: 'default' })],
      ['bullmqAdd', () => queue.home.add('noop', { sessionId }, { removeOnComplete: true })],
    ];
    const leaseAndRelease: [Hop, () => Promise<unknown>][] = [
      [
        'leaseAndClaim',
        async () => {
          const lease = await store.acquireLeaseAndClaim({ sessionId, owner: 'bench', ttlMs: 30_000 });
          if (!lease.acquired || lease.claimed === null || lease.claimed === undefined) throw new Error(`session ${sessionId}: lease or claim not taken`);
          token = lease.token;
        },
      ],
      [
        'release',
        async () => {
          if (token === null || !(await store.releaseLease({ sessionId, token, finishesPublished: true }))) throw new Error(`session ${sessionId}: not released`);
        },
      ],
    ];
    const rotation = i % hops.length;
    const order = [...hops.slice(rotation), ...hops.slice(0, rotation)];
    // After the accept: the lease and its release follow it at once, as on the path.
    const at = order.findIndex(([hop]) => hop === 'accept');
    order.splice(at + 1, 0, ...leaseAndRelease);
    let pathMs = 0;
    for (const [hop, run] of order) {
      const started = performance.now();
      await run();
      const ms = performance.now() - started;
      if (PATH.includes(hop)) pathMs += ms;
      if (!record) continue;
      const measured = times.get(hop);
      if (measured === undefined) times.set(hop, [ms]);
      else measured.push(ms);
    }
    if (record) pathSums.push(pathMs);
  };
  for (let i = 0; i < WARM_UP; i += 1) await iteration(-1 - i, false);
  for (let i = 0; i < ITERATIONS; i += 1) await iteration(i, true);

  const stats = (hop: Hop) => {
    const values = times.get(hop) ?? [];
    return { p50: round(percentile(values, 50), 3), p90: round(percentile(values, 90), 3), p99: round(percentile(values, 99), 3) };
  };
  const hops = Object.fromEntries(['accept', 'leaseAndClaim', 'release', 'publishEvent', 'kick'].map((hop) => [hop, stats(hop as Hop)]));
  const floor = Object.fromEntries(['select1', 'rawInsertCommit', 'ping', 'xadd', 'bullmqAdd'].map((hop) => [hop, stats(hop as Hop)]));
  const p50 = (hop: Hop) => stats(hop).p50;
  await report({
    name: 'dispatch-hops',
    command: 'node --max-semi-space-size=32 --import tsx bench/dispatch-hops.bench.ts',
    runs: ITERATIONS,
    sizes: { iterations: ITERATIONS, warmUpIterations: WARM_UP, postgresConnections: 2, redisConnections: 2 },
    figures: {
      unit: 'ms per operation, alone on an idle machine',
      hops,
      // The path's hops at p50, its two publishes included: what dispatch costs before anything queues it.
      pathP50Ms: round(p50('accept') + 2 * p50('publishEvent') + p50('kick') + p50('leaseAndClaim'), 3),
      // The four hops of one iteration added up (one publish), over the iterations: how often one of them is slow.
      pathSumMs: { hops: PATH, p50: round(percentile(pathSums, 50), 3), p90: round(percentile(pathSums, 90), 3), p99: round(percentile(pathSums, 99), 3) },
    },
    floor,
    ratio: {
      acceptVsRawInsertCommit: round(p50('accept') / p50('rawInsertCommit'), 2),
      leaseAndClaimVsRawInsertCommit: round(p50('leaseAndClaim') / p50('rawInsertCommit'), 2),
      releaseVsRawInsertCommit: round(p50('release') / p50('rawInsertCommit'), 2),
      publishEventVsXadd: round(p50('publishEvent') / p50('xadd'), 2),
      kickVsBullmqAdd: round(p50('kick') / p50('bullmqAdd'), 2),
    },
    targets: [],
  });
} finally {
  unregister();
  await publisher.close();
  await queue.close();
  await deleteQueueKeys(redis, queueName).catch(() => {});
  queueConnection.disconnect();
  redis.disconnect();
  await pool.end();
  await db.drop();
  await cleanupAll();
}
