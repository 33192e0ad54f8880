/**
 * pg-boss 12 (needs Node 22: run with Node 22 from the npm registry, `nodeBinary`): a job per input on
 * a queue whose policy is `key_strict_fifo` with `singletonKey` = the session id — pg-boss's own
 * "FIFO per key, one at a time per key". History in `peer_history`, through pg-boss's own pool or,
 * `transactional`, in the same transaction as the jobs' completion.
 * Producer: `boss.send`.
 */
import { Redis } from 'ioredis';
import { PgBoss } from 'pg-boss';
import { node22 } from '../lib/node22.js';
import { appendHistory, createHistoryTable, loadHistory, verifyPgPeer, type Queryable } from '../lib/pg-history.js';
import { packageVersion } from '../lib/package-version.js';
import { runStandardInput } from '../lib/standard-loop.js';
import { InputEvents } from '../lib/standard.js';
import type { PeerContext, PeerSystem, StandardInput } from '../lib/system.js';

const QUEUE = 'standard_input';

function boss(ctx: PeerContext, max: number): PgBoss {
  const instance = new PgBoss({ connectionString: ctx.pgUrl, max, schedule: false, supervise: false, useListenNotify: true });
  instance.on('error', (error: unknown) => {
    if (process.env.PEERS_DEBUG) console.error('pg-boss', error);
  });
  return instance;
}

/** pg-boss's transaction handle as the history helpers' `query`. */
function queryable(db: { executeSql(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> }): Queryable {
  return { query: (text, values) => db.executeSql(text, values) };
}

const system: PeerSystem = {
  name: 'pg-boss',
  nodeBinary: node22(),
  versions: () => ({ 'pg-boss': packageVersion('pg-boss'), node: process.version }),
  // Workers per process (`localConcurrency`), jobs per fetch (`batchSize`, fetched again at once while
  // batches come back full: `burstWhenBatchFull`; a batch's jobs run side by side, and
  // `key_strict_fifo` gives a batch at most one job per session), the queue's LISTEN/NOTIFY opt-in
  // (`notify`: a `send` wakes the workers instead of their next poll; the NOTIFY backstop poll is kept
  // at the base poll, 0.5 s, pg-boss's minimum, because a session's next job becomes fetchable on the
  // previous one's completion, which notifies nobody), and whether the history commits with the
  // completion (`transactional`: the batch in one transaction). Measured here with 20 sessions: one
  // job per fetch ran about 30 inputs/s (each worker waits out its poll between fetches); batches with
  // burst about 320/s, 245/s transactional.
  sweep: [
    { concurrency: 4, batchSize: 8, notify: 1, transactional: 0 },
    { concurrency: 8, batchSize: 16, notify: 1, transactional: 0 },
    { concurrency: 4, batchSize: 8, notify: 0, transactional: 0 },
    { concurrency: 4, batchSize: 8, notify: 1, transactional: 1 },
  ],
  async setup(ctx) {
    const admin = boss(ctx, 2);
    await admin.start();
    await admin.createQueue(QUEUE, { policy: 'key_strict_fifo', notify: Number(ctx.settings['notify'] ?? 1) === 1 });
    await admin.stop({ graceful: false });
    await createHistoryTable(ctx.pgUrl);
    return { serverPids: [] };
  },
  async startWorker(ctx, model) {
    const redis = new Redis(ctx.redisUrl);
    const concurrency = Number(ctx.settings['concurrency'] ?? 4);
    const batchSize = Number(ctx.settings['batchSize'] ?? 8);
    const transactional = Number(ctx.settings['transactional'] ?? 0) === 1;
    // A connection per worker's transaction, plus fetches and LISTEN; within max_connections (100 here).
    const instance = boss(ctx, Math.min(concurrency * (transactional ? 1 : 4) + 4, 52));
    await instance.start();
    await instance.work<StandardInput, unknown, { localConcurrency: number; batchSize: number; burstWhenBatchFull: boolean; transactional: boolean; pollingIntervalSeconds: number; notifyPollingIntervalSeconds: number }>(QUEUE, { localConcurrency: concurrency, batchSize, burstWhenBatchFull: true, transactional, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 0.5 }, async (jobs: Array<{ data: StandardInput }>, tx?: Parameters<typeof queryable>[0]) => {
      const db = queryable(tx ?? instance.getDb() as Parameters<typeof queryable>[0]);
      await Promise.all(jobs.map(async (job) => {
        const input = job.data;
        await runStandardInput(model, new InputEvents(redis, ctx.runId, input), input.text, {
          loadHistory: () => loadHistory(db, input.sessionId),
          step: (_name, fn) => fn(),
          appendHistory: (messages) => appendHistory(db, input.sessionId, input.inputId, messages),
        });
      }));
    });
    return {
      async stop() {
        await instance.stop({ graceful: true, timeout: 10_000 });
        redis.disconnect();
      },
    };
  },
  async createProducer(ctx) {
    const instance = boss(ctx, 16);
    await instance.start();
    return {
      async add(input) {
        await instance.send(QUEUE, input, { singletonKey: input.sessionId, retryLimit: 5 });
      },
      async close() {
        await instance.stop({ graceful: false });
      },
    };
  },
  verify: verifyPgPeer,
  async teardown() {},
};

export default system;
