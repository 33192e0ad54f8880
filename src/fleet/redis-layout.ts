import { createRequire } from 'node:module';

/** Redis Cluster's key slot of a string (the package ioredis routes commands by; it ships no types). */
export const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

/**
 * Where a fleet's keys and jobs live in Redis (docs/redis-cluster.md). On one Redis node (the
 * default) the layout is the one every earlier release used: one BullMQ queue `<queue>` under
 * BullMQ's prefix `bull`, streams at `<queue>:events:<sessionId>`.
 *
 * On a Redis Cluster a script may only touch keys of one hash slot, so everything is split into
 * `shards`, each under its own hash tag `{<queue>:<i>}` and so in one slot:
 * - shard `i`'s BullMQ queue, under the prefix `bull:{<queue>:<i>}` (BullMQ's own keys must share a slot);
 * - its other keys (fair lines, the raw path's order), `{<queue>:<i>}:…`;
 * - the event keys of its sessions, `{<queue>:<i>}:events:<sessionId>` (counter, finished set and
 *   deletion fence likewise), whose tail and finish channels hash to the same slot and are sharded
 *   pub/sub channels there. One script call writes every session of a shard that has events ready.
 * A session always belongs to shard {@link shardOf}; the shards spread over the cluster's primaries.
 */
export interface RedisLayout {
  /** `LOOPFLEET_QUEUE`. */
  queueName: string;
  /** Redis Cluster (`REDIS_CLUSTER_NODES` set). */
  cluster: boolean;
  /** `LOOPFLEET_QUEUE_SHARDS`: BullMQ queues dispatch is spread over; always 1 on one node. */
  shards: number;
}

/** The layout on one Redis node: one queue, untagged keys. */
export function singleNodeLayout(queueName: string): RedisLayout {
  return { queueName, cluster: false, shards: 1 };
}

/** Most shards a layout may have (`LOOPFLEET_QUEUE_SHARDS`). */
export const MAX_QUEUE_SHARDS = 256;

/**
 * The shard whose queue runs `sessionId`'s jobs: the Redis Cluster key slot of the id (CRC16 of its
 * bytes, mod 16384, as every Redis client computes it) modulo the shard count. Always 0 with one shard.
 */
export function shardOf(layout: RedisLayout, sessionId: string): number {
  return layout.shards === 1 ? 0 : calculateSlot(sessionId) % layout.shards;
}

/** The hash tag every key of shard `shard` carries in cluster mode: `{<queue>:<shard>}`. */
function shardTag(layout: RedisLayout, shard: number): string {
  return `{${layout.queueName}:${shard}}`;
}

/** The BullMQ `prefix` of shard `shard`'s queue: BullMQ's default `bull` on one node, `bull:{<queue>:<shard>}` in a cluster. */
export function shardPrefix(layout: RedisLayout, shard: number): string {
  return layout.cluster ? `bull:${shardTag(layout, shard)}` : 'bull';
}

/**
 * What a shard's own keys (fair lines, the raw path's order) start with in place of the queue name:
 * the queue name on one node, the shard's hash tag in a cluster, so they share the slot of its BullMQ keys.
 */
export function shardKeyRoot(layout: RedisLayout, shard: number): string {
  return layout.cluster ? shardTag(layout, shard) : layout.queueName;
}

/**
 * The key root of the BullMQ queue whose keys start with `qualifiedName` (a job's or a queue's
 * `queueQualifiedName`, `<prefix>:<queue>`): the shard's hash tag when its prefix carries one, else
 * the queue name.
 */
export function keyRootOfQueue(qualifiedName: string, queueName: string): string {
  const tag = /^bull:(\{[^}]+\}):/.exec(qualifiedName);
  return tag === null ? queueName : tag[1]!;
}
