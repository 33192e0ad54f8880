/**
 * The bench's producer in a child process. In production inputs come from other services (API
 * servers calling `SessionQueue.add`), not from the worker's process: run in the bench process, the
 * producer's validation, Postgres accepts and Redis kicks competed with the worker for its one event
 * loop, and its CPU was counted as the worker's. Here it runs on its own event loop, its CPU is read
 * on its own (by pid), and the raw BullMQ floor's adds come from the same process, so the fleet and
 * the floor are compared with the same arrangement.
 */
import { fileURLToPath } from 'node:url';
import { startBenchChild } from './bench-child.js';
import type { PgCounts } from './fleet.js';
import type { NoopJobProducer, NoopJobs } from './floors.js';
import type { OpenLoopPlan, OpenLoopResult } from './open-loop.js';
import type { StandardInputBatch, StandardInputProducer } from './standard-run.js';

const ENTRY = fileURLToPath(new URL('./producer-process-main.ts', import.meta.url));
/** Added to an open loop's own time bound for the reply's (stream reading, percentiles, the reply). */
const OPEN_LOOP_SLACK_MS = 30_000;

/** The fleet queue a `SessionQueue` of the child talks to (one per target, opened on first use). */
export interface SessionQueueTarget {
  databaseUrl: string;
  redisUrl: string;
  queueName: string;
  /** A Redis Cluster's nodes (`REDIS_CLUSTER_NODES`); `redisUrl` then gives only credentials. */
  redisClusterNodes?: string;
  /** `LOOPFLEET_QUEUE_SHARDS` (a cluster only). */
  queueShards?: number;
}

/**
 * What the child sent for one batch of adds, counted there as the bench counts its own process
 * (`countPgStatements`, `countRedisCommands`), from the batch's command until its reply.
 */
export interface ProducerCounts {
  pg: PgCounts;
  redis: Record<string, number>;
}

/** The child's requests (`producer-process-main.ts` answers them). */
export type ProducerRequest =
  /** The batch's adds through the target's `SessionQueue`; replies with `ProducerCounts`. */
  | { type: 'standardInputs'; target: SessionQueueTarget; batch: StandardInputBatch }
  /** The latency bench's client: adds at a rate and the subscriber timing them; replies with `OpenLoopResult`. */
  | { type: 'openLoop'; target: SessionQueueTarget; plan: OpenLoopPlan }
  /** Opens a floor queue's `Queue` (own connection, ready); replies when it is. */
  | { type: 'openNoopJobs'; redisUrl: string; queueName: string }
  /** `n` no-op jobs to an opened floor queue, `concurrency` in flight; replies once all were added. */
  | { type: 'addNoopJobs'; queueName: string; n: number; concurrency: number }
  | { type: 'closeNoopJobs'; queueName: string };

export interface ProducerProcess extends NoopJobProducer {
  /** The child's pid, to read its CPU (`cpuSnapshot({ producer: pid })`). */
  pid: number;
  /** The standard inputs' producer for one fleet queue: the batch's adds are made by the child. */
  sessionQueue(target: SessionQueueTarget): StandardInputProducer<ProducerCounts>;
  /** Runs one open loop of the latency bench in the child (`open-loop.ts`), through the target's `SessionQueue`. */
  openLoop(target: SessionQueueTarget, plan: OpenLoopPlan): Promise<OpenLoopResult>;
  /** Stops the child (its queues closed) and waits for its exit; idempotent. Also run by `cleanupAll`. */
  close(): Promise<void>;
}

/**
 * Starts the producer child (`startBenchChild`) and resolves once it is ready. Rejects — with the
 * child's stderr — if it exits first or is not ready within `startTimeoutMs`. Its requests reject with
 * the child's error message when an add failed.
 */
export async function startProducerProcess(options: { startTimeoutMs?: number } = {}): Promise<ProducerProcess> {
  const child = await startBenchChild<unknown>(ENTRY, {}, { name: 'producer process', ...options });
  const request = <Reply>(message: ProducerRequest, timeoutMs?: number) => child.request<Reply>(message, timeoutMs);
  return {
    pid: child.pid,
    // The arrivals, then the wait for the last finish, with room to spare: the child's own deadline answers first.
    openLoop: (target, plan) => request<OpenLoopResult>({ type: 'openLoop', target, plan }, (plan.total / plan.rate) * 1000 + plan.timeoutMs + OPEN_LOOP_SLACK_MS),
    sessionQueue: (target) => ({ addStandardInputs: (batch) => request<ProducerCounts>({ type: 'standardInputs', target, batch }) }),
    async open(redisUrl, queueName): Promise<NoopJobs> {
      await request({ type: 'openNoopJobs', redisUrl, queueName });
      return {
        add: (n, concurrency) => request({ type: 'addNoopJobs', queueName, n, concurrency }),
        close: () => request({ type: 'closeNoopJobs', queueName }),
      };
    },
    close: child.close,
  };
}
