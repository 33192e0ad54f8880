import { Queue, type JobType, type QueueOptions } from 'bullmq';
import { keyRootOfQueue, shardOf, shardPrefix, singleNodeLayout, type RedisLayout } from './redis-layout.js';
import type { RedisConnection } from './redis-connection.js';

/** What a queue is opened with besides its connection and prefix (BullMQ's telemetry). */
export type ShardQueueOptions = Omit<QueueOptions, 'connection' | 'prefix'>;

/**
 * The BullMQ queues a fleet dispatches on (docs/redis-cluster.md): one on a single Redis node; on a
 * Redis Cluster, `LOOPFLEET_QUEUE_SHARDS` of them, each under its own hash-tagged prefix so its keys
 * share one slot, and so the wake-ups spread over the cluster's primaries. A session's jobs (drains,
 * timer alarms) always go to the queue of its shard ({@link shardOf}); the sweeper's schedule lives
 * on shard 0, its {@link home}.
 */
export class QueueShards {
  readonly layout: RedisLayout;
  readonly queues: readonly Queue[];

  constructor(layout: RedisLayout, queues: readonly Queue[]) {
    if (queues.length !== layout.shards) throw new Error(`${layout.shards} shard(s) need as many queues, got ${queues.length}`);
    this.layout = layout;
    this.queues = queues;
  }

  /** Opens a queue per shard on `connection` (BullMQ does not close a connection it is given). */
  static open(layout: RedisLayout, connection: RedisConnection, options: ShardQueueOptions = {}): QueueShards {
    const queues: Queue[] = [];
    for (let shard = 0; shard < layout.shards; shard += 1) {
      queues.push(new Queue(layout.queueName, Object.assign({}, options, { connection, prefix: shardPrefix(layout, shard) })));
    }
    return new QueueShards(layout, queues);
  }

  /** One queue on one Redis node, already open (BullMQ's default prefix). */
  static single(queue: Queue): QueueShards {
    return new QueueShards(singleNodeLayout(queue.name), [queue]);
  }

  /** The queue name (`LOOPFLEET_QUEUE`), the same on every shard. */
  get name(): string {
    return this.layout.queueName;
  }

  /** The queue of `sessionId`'s shard. */
  for(sessionId: string): Queue {
    return this.queues[shardOf(this.layout, sessionId)]!;
  }

  /** Shard 0's queue: where fleet-wide jobs (the sweeper's schedule) live. */
  get home(): Queue {
    return this.queues[0]!;
  }

  /** The root of `queue`'s own keys besides BullMQ's (fair lines, the raw path's order): see `shardKeyRoot`. */
  keyRoot(queue: Queue): string {
    return keyRootOfQueue(queue.qualifiedName, this.layout.queueName);
  }

  /** Job counts by state, summed over the shards. */
  async getJobCounts(...states: JobType[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const part of await Promise.all(this.queues.map((queue) => queue.getJobCounts(...states)))) {
      for (const [state, count] of Object.entries(part)) counts[state] = (counts[state] ?? 0) + count;
    }
    return counts;
  }

  /** Closes every shard's queue. */
  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close()));
  }
}
