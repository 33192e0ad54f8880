import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { resolveSessionQueueOptions, type SessionQueueOptions } from '../../../src/producer/session-queue-options.js';

/** The error `resolveSessionQueueOptions` throws for `options`. */
function refusal(options: SessionQueueOptions): ConfigInvalidError {
  try {
    resolveSessionQueueOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return error as ConfigInvalidError;
  }
  throw new Error('the options were accepted');
}

describe('SessionQueue options redisClusterNodes and queueShards', () => {
  it('default to one Redis node and one shard', () => {
    expect(resolveSessionQueueOptions({})).toMatchObject({ redisClusterNodes: null, queueShards: 1 });
    expect(resolveSessionQueueOptions({ redisClusterNodes: null })).toMatchObject({ redisClusterNodes: null, queueShards: 1 });
  });

  it('take the nodes as text, as REDIS_CLUSTER_NODES does', () => {
    const resolved = resolveSessionQueueOptions({ redisClusterNodes: 'r1:7000, r2:7001,[::1]:7002', queueShards: 3 });
    expect(resolved.redisClusterNodes).toEqual([
      { host: 'r1', port: 7000 },
      { host: 'r2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(resolved.queueShards).toBe(3);
  });

  it('take the nodes as a list of { host, port }, an IPv6 host without brackets', () => {
    const nodes = [
      { host: 'r1', port: 7000 },
      { host: 'fd00::1', port: 7001 },
    ];
    expect(resolveSessionQueueOptions({ redisClusterNodes: nodes, queueShards: 256 })).toMatchObject({ redisClusterNodes: nodes, queueShards: 256 });
  });

  it('keep redisUrl for the credentials and scheme', () => {
    expect(resolveSessionQueueOptions({ redisUrl: 'rediss://u:p@x:6380', redisClusterNodes: 'r1:7000' })).toMatchObject({ redisUrl: 'rediss://u:p@x:6380' });
  });

  it('refuse invalid nodes, naming redisClusterNodes', () => {
    const invalid: unknown[] = ['r1', 'r1:0', '', ',', 42, { host: 'r1', port: 7000 }, [{ host: 'r1', port: 70000 }], [{ host: 'r 1', port: 7000 }], [], [null]];
    for (const value of invalid) {
      const error = refusal({ redisClusterNodes: value as SessionQueueOptions['redisClusterNodes'] });
      expect(error.details).toEqual({ option: 'redisClusterNodes' });
      expect(error.message).toMatch(/^SessionQueue: redisClusterNodes must /);
    }
  });

  it('refuse more than 1 shard without a cluster, naming queueShards', () => {
    const error = refusal({ queueShards: 2 });
    expect(error.details).toEqual({ option: 'queueShards' });
    expect(error.message).toBe('SessionQueue: queueShards more than 1 shard needs a Redis Cluster (redisClusterNodes, or a Cluster as redis)');
  });

  it('refuse a shard count out of 1–256 or not an integer', () => {
    for (const value of [0, -1, 257, 2.5, Number.NaN, '3']) {
      const error = refusal({ redisClusterNodes: 'r1:7000', queueShards: value as number });
      expect(error.details).toEqual({ option: 'queueShards' });
      expect(error.message).toBe('SessionQueue: queueShards must be an integer from 1 to 256');
    }
  });

  it('take more than 1 shard with a Cluster given as redis, and refuse it with a single-node Redis', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const single = new Redis({ lazyConnect: true });
    try {
      // A given connection wins over the node list, which is then ignored.
      expect(resolveSessionQueueOptions({ redis: cluster, queueShards: 4, redisClusterNodes: 'ignored:1' })).toMatchObject({ redis: cluster, queueShards: 4, redisClusterNodes: null });
      expect(refusal({ redis: single, queueShards: 4 }).details).toEqual({ option: 'queueShards' });
      expect(refusal({ redis: single, queueShards: 4, redisClusterNodes: 'r1:7000' }).details).toEqual({ option: 'queueShards' });
    } finally {
      cluster.disconnect();
      single.disconnect();
    }
  });
});
