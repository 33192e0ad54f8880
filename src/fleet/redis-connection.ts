import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { singleNodeLayout, type RedisLayout } from './redis-layout.js';
import { coalesceClusterWrites, coalesceWrites } from './coalesced-writes.js';

/** A Redis node's address, as `REDIS_CLUSTER_NODES` lists them. */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

/** A connection to the fleet's Redis: one node, or a Redis Cluster (docs/redis-cluster.md). */
export type RedisConnection = Redis | Cluster;

/** Where the fleet's Redis is: `REDIS_URL`, and `REDIS_CLUSTER_NODES` when it is a cluster. */
export interface RedisTarget {
  url: string;
  /** The cluster's nodes to start from; null for one Redis node at `url`. */
  clusterNodes: readonly RedisNodeAddress[] | null;
}

/**
 * How a cluster client rides out a failover or a slot migration: a command that meets MOVED or ASK is
 * sent on to the node named (up to 64 times in all); one that meets CLUSTERDOWN or TRYAGAIN, or a node
 * that went away, waits and is tried again while the cluster's map is refreshed.
 */
const CLUSTER_DEFAULTS: ClusterOptions = {
  // ioredis's defaults (16 redirections, 100 ms) ran out during a failover on a real cluster (the
  // replica takes about 2.5 s to be promoted) and failed writes with "Too many Cluster redirections".
  maxRedirections: 64,
  retryDelayOnFailover: 300,
  retryDelayOnClusterDown: 300,
  retryDelayOnTryAgain: 100,
  clusterRetryStrategy: (times) => Math.min(100 * times, 2_000),
  // A command connection learns of a moved slot from MOVED, ASK or a lost node, so its periodic read
  // of the map is only a safety net (ioredis's default period). Each read opens a connection of its
  // own and rebuilds the 16,384-slot map: every 2 s on every client, that cost the fleet about a
  // tenth of its Redis client CPU.
  slotsRefreshInterval: 5_000,
  slotsRefreshTimeout: 2_000,
  shardedSubscribers: false,
};

/**
 * What a connection that subscribes to sharded channels (`SSUBSCRIBE`) changes: it subscribes on the
 * node that owns each channel's slot, and reads the map every 2 s, because after a slot moved its
 * subscription follows it to the new owner only at the next read (the old owner drops it without
 * ioredis noticing).
 */
const SHARDED_SUBSCRIBER: ClusterOptions = { shardedSubscribers: true, slotsRefreshInterval: 2_000 };

/**
 * Opens a connection to `target` with `options` (ioredis's; in cluster mode they apply to every node's
 * connection, and `REDIS_URL`'s user, password and `rediss:` scheme are added to them). Connects in
 * the background unless `lazyConnect`.
 */
export function openRedis(target: RedisTarget, options: RedisOptions = {}): RedisConnection {
  if (target.clusterNodes === null) return coalesceWrites(new Redis(target.url, options));
  const url = new URL(target.url);
  const redisOptions: RedisOptions = Object.assign({ connectTimeout: 2_000 }, options);
  if (url.username !== '') redisOptions.username = decodeURIComponent(url.username);
  if (url.password !== '') redisOptions.password = decodeURIComponent(url.password);
  if (url.protocol === 'rediss:') redisOptions.tls = Object.assign({}, options.tls);
  const clusterOptions: ClusterOptions = Object.assign({}, CLUSTER_DEFAULTS, { redisOptions });
  if (options.lazyConnect !== undefined) clusterOptions.lazyConnect = options.lazyConnect;
  if (options.enableOfflineQueue !== undefined) clusterOptions.enableOfflineQueue = options.enableOfflineQueue;
  return coalesceClusterWrites(
    new Cluster(
      target.clusterNodes.map((node) => ({ host: node.host, port: node.port })),
      clusterOptions,
    ),
  );
}

/** Where a process configured by `config` finds Redis (`REDIS_URL`, `REDIS_CLUSTER_NODES`). */
export function redisTarget(config: { redisUrl: string; redisClusterNodes: readonly RedisNodeAddress[] | null }): RedisTarget {
  return { url: config.redisUrl, clusterNodes: config.redisClusterNodes };
}

/** Whether `connection` talks to a Redis Cluster. */
export function isCluster(connection: RedisConnection): connection is Cluster {
  return connection instanceof Cluster;
}

/** What a duplicated connection is for, beyond its ioredis options. */
export interface DuplicateRole {
  /** It subscribes to sharded channels (`SSUBSCRIBE`) on a cluster: see {@link SHARDED_SUBSCRIBER}. Default false. */
  shardedSubscriber?: boolean;
}

/** A new connection to the same Redis as `connection`, with `options` changed (ioredis's, per node in a cluster). */
export function duplicateRedis(connection: RedisConnection, options: RedisOptions = {}, role: DuplicateRole = {}): RedisConnection {
  if (!isCluster(connection)) return coalesceWrites(connection.duplicate(options));
  const redisOptions = Object.assign({}, connection.options.redisOptions, options);
  const overrides: ClusterOptions = Object.assign({ redisOptions }, role.shardedSubscriber === true ? SHARDED_SUBSCRIBER : {});
  if (options.enableOfflineQueue !== undefined) overrides.enableOfflineQueue = options.enableOfflineQueue;
  if (options.lazyConnect !== undefined) overrides.lazyConnect = options.lazyConnect;
  if (options.enableAutoPipelining !== undefined) overrides.enableAutoPipelining = options.enableAutoPipelining;
  return coalesceClusterWrites(connection.duplicate([], overrides));
}

/** The key prefix ioredis adds to `connection`'s keys (`keyPrefix`); '' for none. */
export function redisKeyPrefix(connection: RedisConnection): string {
  return connection.options.keyPrefix ?? '';
}

/** The layout of queue `queueName` as `connection` reaches it: a cluster's with `shards` shards, or one node's. */
export function connectionLayout(connection: RedisConnection, queueName: string, shards: number): RedisLayout {
  return isCluster(connection) ? { queueName, cluster: true, shards } : singleNodeLayout(queueName);
}
