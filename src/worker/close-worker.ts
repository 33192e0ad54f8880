import type { Worker } from 'bullmq';
import type { QueueShards } from '../fleet/queue-shards.js';
import type { Redis } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type pg from 'pg';
import type { Logger } from 'pino';
import { CancelledError } from '../core/errors/index.js';
import type { RedisEventPublisher } from '../events/index.js';
import { closeConnection } from '../events/dedicated-connection.js';

/** What one worker process opens: closed, in this order, by {@link closeWorker}. */
export interface WorkerConnections {
  pool: pg.Pool;
  redis: RedisConnection;
  subscriber: RedisConnection;
  workerConnection: RedisConnection;
  queue: QueueShards;
  publisher: RedisEventPublisher;
  /** The publisher's own connection (it quits it in `close()`; dropped here when that hangs). */
  events: RedisConnection;
}

/**
 * After the stop is forced (second signal, end of the grace period): how long the aborted drains get
 * to hand their sessions back and release their leases, and BullMQ to finish their jobs, before its
 * connections are dropped, ms. Their waits on Redis are cut at once then (`stopping-wait.ts`), so
 * this is Postgres time and, with Redis up, BullMQ's job completions.
 */
export const FORCED_CLOSE_WAIT_MS = 3_000;

/** Longest one closing step that waits on Redis (a flush, a QUIT) may take before its connection is dropped, ms. */
export const CLOSE_STEP_WAIT_MS = 2_000;

/** The drains (job processor calls) running in one worker: the close waits for them before ending the pool. */
export class RunningJobs {
  readonly #running = new Set<Promise<unknown>>();

  /** Wraps a BullMQ processor so each of its calls is counted while it runs. */
  track<A extends unknown[], R>(processor: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args) => {
      const running = processor(...args);
      this.#running.add(running);
      const forget = (): void => void this.#running.delete(running);
      running.then(forget, forget);
      return running;
    };
  }

  /** Resolves once every call running now has settled. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#running]);
  }
}

export interface CloseParts {
  /** One BullMQ worker per queue shard; empty before they were made. */
  workers: readonly Worker[];
  connections: WorkerConnections;
  /** Aborted to force the stop: every run's signal, and the end of waiting for BullMQ. */
  shutdown: AbortController;
  jobs: RunningJobs;
  logger: Logger;
  /** The last step (the health server, the MCP servers). */
  after: () => Promise<void>;
  /** Run from the start, alongside the others, and waited for before Postgres closes: leaving the agent registry. */
  leaveRegistry: () => Promise<void>;
}

/**
 * Graceful first, forced after `graceMs` or when `shutdown` is aborted: running inputs are aborted and
 * their sessions handed back; BullMQ then gets {@link FORCED_CLOSE_WAIT_MS}, and its connections are
 * dropped rather than waited on. Every step runs even when an earlier one fails; the first failure is
 * thrown at the end.
 */
export async function closeWorker(parts: CloseParts, graceMs: number): Promise<void> {
  const { connections, logger } = parts;
  const forced = setTimeout(() => parts.shutdown.abort(new CancelledError('worker shutting down')), graceMs);
  const failures: unknown[] = [];
  const step = async (name: string, run: () => Promise<unknown>): Promise<void> => {
    try {
      await run();
    } catch (error) {
      failures.push(error);
      logger.warn({ err: error, step: name }, 'worker close step failed; closing the rest');
    }
  };
  // A stopping worker takes no new sessions: it leaves the registry at once, while its drains end.
  const left = step('agent registry', parts.leaveRegistry);
  try {
    if (parts.workers.length > 0) await step('bullmq worker', () => Promise.all(parts.workers.map((worker) => closeBullmq(parts, worker))));
  } finally {
    clearTimeout(forced);
  }
  // The drains are over (or past their bound): nothing queues events any more.
  await step('event publisher', () => withinOrDrop(connections.publisher.close(), [connections.events]));
  await step('redis', () =>
    Promise.all([
      withinOrDrop(connections.queue.close(), []),
      ...[connections.subscriber, connections.redis, connections.workerConnection, connections.events].map((connection) =>
        withinOrDrop(closeConnection(connection), [connection]),
      ),
    ]),
  );
  await left;
  await step('postgres', () => connections.pool.end());
  await step('health server and MCP servers', parts.after);
  if (failures.length > 0) throw failures[0];
}

/**
 * BullMQ's graceful close waits for the running jobs, and each job's completion is a Redis command:
 * while Redis is down it never returns. So once the stop is forced it gets a bound, after which its
 * connections are dropped.
 */
async function closeBullmq(parts: CloseParts, worker: Worker): Promise<void> {
  const shutdown = parts.shutdown.signal;
  // Forced from the start (`--grace 0`, `close({ force: true })`): BullMQ does not wait for its jobs;
  // the drains are still waited for below, so their lease releases run before the pool ends.
  const closing = worker.close(shutdown.aborted);
  if (await settlesBeforeAbort(closing, shutdown)) return closing;
  const settled = await settlesWithin(Promise.allSettled([closing, parts.jobs.idle()]), FORCED_CLOSE_WAIT_MS);
  if (settled) return closing;
  parts.logger.warn({ waitedMs: FORCED_CLOSE_WAIT_MS }, 'BullMQ did not close after the forced stop (Redis unreachable?); dropping its connections');
  // Not awaited: a connection that is reconnecting never reports its end.
  worker.disconnect().catch(() => {});
  parts.connections.workerConnection.disconnect();
  await settlesWithin(parts.jobs.idle(), FORCED_CLOSE_WAIT_MS);
}

/** Waits for `pending` up to {@link CLOSE_STEP_WAIT_MS}; past it, drops `connections` and goes on. */
async function withinOrDrop(pending: Promise<unknown>, connections: RedisConnection[]): Promise<void> {
  if (await settlesWithin(pending, CLOSE_STEP_WAIT_MS)) return void (await pending);
  for (const connection of connections) connection.disconnect();
}

/** Whether `pending` settles within `ms` (a rejection counts; the caller awaits it for the error). */
function settlesWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const settle = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    pending.then(settle, settle);
  });
}

/** Whether `pending` settles before `signal` aborts (false at once when it already has). */
function settlesBeforeAbort(pending: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = (): void => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      },
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      },
    );
  });
}
