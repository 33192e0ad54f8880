/**
 * Raw BullMQ no-op jobs: the floor of the peers table. A job per input (`Queue.add`, removed on
 * completion), a `Worker` whose processor does nothing — no model, no stream entries, no history, no
 * per-session order. The harness counters are fed in memory and written in one pipeline per event-loop
 * turn (an RPUSH of the turn's start latencies and an INCRBY of its finishes), so the floor pays
 * about one command per batch of jobs, not two per job.
 */
import { readFileSync } from 'node:fs';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { finishedKey, startsKey } from '../lib/standard.js';
import type { HarnessSystem } from '../lib/extras.js';
import type { PeerContext } from '../lib/system.js';

const queueOf = (ctx: PeerContext) => `peersfloor_${ctx.runId}`;

/** The root package's bullmq (the one loopfleet runs on). */
const version = (JSON.parse(readFileSync(new URL('../../../node_modules/bullmq/package.json', import.meta.url), 'utf8')) as { version: string }).version;

const floor: HarnessSystem = {
  name: 'bullmq-floor',
  modelKinds: ['scripted'],
  versions: () => ({ bullmq: version, node: process.version }),
  sweep: [{ concurrency: 64 }, { concurrency: 128 }, { concurrency: 256 }],

  setup: async () => ({ serverPids: [] }),

  async startWorker(ctx) {
    const connection = new Redis(ctx.redisUrl, { maxRetriesPerRequest: null });
    const counters = new Redis(ctx.redisUrl);
    let starts: number[] = [];
    let finished = 0;
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const p = counters.pipeline();
      if (starts.length > 0) p.rpush(startsKey(ctx.runId), ...starts.map(String));
      if (finished > 0) p.incrby(finishedKey(ctx.runId), finished);
      starts = [];
      finished = 0;
      void p.exec();
    };
    const worker = new Worker(
      queueOf(ctx),
      async (job) => {
        starts.push(Date.now() - (job.data as { addedAt: number }).addedAt);
      },
      { connection, concurrency: Number(ctx.settings['concurrency'] ?? 128) },
    );
    worker.on('completed', () => {
      finished += 1;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
    await worker.waitUntilReady();
    return {
      async stop() {
        await worker.close();
        flush();
        await counters.quit();
        await connection.quit();
      },
    };
  },

  async createProducer(ctx) {
    const connection = new Redis(ctx.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(queueOf(ctx), { connection });
    await queue.waitUntilReady();
    return {
      add: async (input) => void (await queue.add('noop', { addedAt: input.addedAt }, { removeOnComplete: true, removeOnFail: true })),
      async close() {
        await queue.close();
        await connection.quit();
      },
    };
  },

  // No history to check: the floor keeps none (its finished count is checked by the harness).
  verify: async () => ({ ok: true, historyInputs: 0, problems: [] }),

  async teardown(ctx) {
    const connection = new Redis(ctx.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(queueOf(ctx), { connection });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
  },
};

export default floor;
