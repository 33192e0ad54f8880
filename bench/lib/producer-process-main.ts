/**
 * Entry of the child process `startProducerProcess` spawns: the bench's producer on its own event
 * loop, as a producer service would be. Protocol (`bench-child.ts`): ready with `{}`, then the
 * requests of `ProducerRequest`. The fleet's adds go through one `SessionQueue` per target (opened on
 * first use, kept for the child's life, as a service keeps its client) and are counted like the bench
 * counts its own process; the latency bench's open loops (`open-loop.ts`: adds at a rate, and the
 * subscriber timing them) through the same `SessionQueue`; the floor's through `inProcessNoopJobs`,
 * the code the bench process used.
 * It closes every queue and exits when its stdin ends.
 */
import { Redis } from 'ioredis';
import { SessionQueue } from '../../src/producer/session-queue.js';
import { serveBenchChild } from './bench-child.js';
import { countPgStatements, countRedisCommands } from './fleet.js';
import { inProcessNoopJobs, type NoopJobs } from './floors.js';
import { openLoop, waitForFinishes } from './open-loop.js';
import type { ProducerCounts, ProducerRequest, SessionQueueTarget } from './producer-process.js';
import { addStandardInputs, type StandardInputBatch } from './standard-run.js';
import { StreamWatcher } from './stream-watcher.js';

/** Longest wait, after the last add, for a subscribed batch's last `input_finished`. */
const SUBSCRIBED_FINISH_TIMEOUT_MS = 120_000;

const sessionQueues = new Map<string, SessionQueue>();
const floorQueues = new Map<string, NoopJobs>();
/** The counters patch client prototypes, process-wide: one batch at a time, or the counts would mix. */
let counting = false;

function queueFor(target: SessionQueueTarget): SessionQueue {
  const key = JSON.stringify([target.databaseUrl, target.redisUrl, target.queueName, target.redisClusterNodes, target.queueShards]);
  let queue = sessionQueues.get(key);
  if (queue === undefined) sessionQueues.set(key, (queue = new SessionQueue(target)));
  return queue;
}

async function standardInputs(target: SessionQueueTarget, batch: StandardInputBatch): Promise<ProducerCounts> {
  if (counting) throw new Error('a batch of standard inputs is already running: one at a time, so its counts are its own');
  const queue = queueFor(target);
  counting = true;
  const statements = countPgStatements();
  const commands = countRedisCommands();
  // With `subscribe`, the counts include the subscribers' reads: the client's commands, as in production.
  const sessionIds = Array.from({ length: Math.min(batch.sessions, batch.n) }, (_, i) => `${batch.prefix}-${i}`);
  // The watcher's connections duplicate this one (two in all, as a queue's subscriptions; one each with BENCH_FOLLOW=blocking).
  const redis = batch.subscribe === true ? new Redis(target.redisUrl) : null;
  const watcher = redis === null ? null : new StreamWatcher(redis, target.queueName, sessionIds);
  watcher?.start();
  try {
    await watcher?.ready();
    await addStandardInputs(queue, batch);
    if (watcher !== null) await waitForFinishes(watcher, batch.n, SUBSCRIBED_FINISH_TIMEOUT_MS);
    return { pg: statements.read(), redis: commands.read() };
  } finally {
    await watcher?.stop();
    redis?.disconnect();
    statements.restore();
    commands.restore();
    counting = false;
  }
}

function floorQueue(queueName: string): NoopJobs {
  const jobs = floorQueues.get(queueName);
  if (jobs === undefined) throw new Error(`floor queue ${queueName} is not open`);
  return jobs;
}

async function handle(request: ProducerRequest): Promise<unknown> {
  switch (request.type) {
    case 'standardInputs':
      return standardInputs(request.target, request.batch);
    case 'openLoop':
      return openLoop(queueFor(request.target), request.plan);
    case 'openNoopJobs':
      if (floorQueues.has(request.queueName)) throw new Error(`floor queue ${request.queueName} is already open`);
      floorQueues.set(request.queueName, await inProcessNoopJobs.open(request.redisUrl, request.queueName));
      return null;
    case 'addNoopJobs':
      await floorQueue(request.queueName).add(request.n, request.concurrency);
      return null;
    case 'closeNoopJobs': {
      const jobs = floorQueue(request.queueName);
      floorQueues.delete(request.queueName);
      await jobs.close();
      return null;
    }
    default:
      throw new Error(`unknown request ${JSON.stringify(request)}`);
  }
}

serveBenchChild<ProducerRequest>({
  ready: {},
  handle,
  close: async () => {
    await Promise.all([...sessionQueues.values()].map((queue) => queue.close()));
    await Promise.all([...floorQueues.values()].map((jobs) => jobs.close()));
  },
});
