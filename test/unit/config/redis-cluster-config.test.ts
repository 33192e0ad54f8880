import { describe, expect, it } from 'vitest';
import { loadClientConfig, loadConfig } from '../../../src/config/index.js';
import { CONFIG_VARIABLES } from '../../../src/config/env-schema.js';
import { redisNodes } from '../../../src/config/env-variable.js';
import { configError } from './config-error.js';

describe('redisNodes (REDIS_CLUSTER_NODES)', () => {
  it('reads a comma-separated list of host:port', () => {
    expect(redisNodes('127.0.0.1:7000')).toEqual({ ok: true, value: [{ host: '127.0.0.1', port: 7000 }] });
    expect(redisNodes('redis-a:6379,redis-b.internal:6380, 10.0.0.3:1')).toEqual({
      ok: true,
      value: [
        { host: 'redis-a', port: 6379 },
        { host: 'redis-b.internal', port: 6380 },
        { host: '10.0.0.3', port: 1 },
      ],
    });
  });

  it('takes an IPv6 host in brackets and gives it without them', () => {
    expect(redisNodes('[::1]:7000,[fd00::a:1]:65535')).toEqual({
      ok: true,
      value: [
        { host: '::1', port: 7000 },
        { host: 'fd00::a:1', port: 65535 },
      ],
    });
  });

  it('skips empty entries (a trailing comma)', () => {
    expect(redisNodes('a:1,,b:2,')).toEqual({ ok: true, value: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }] });
  });

  it('refuses an entry that is not host:port, naming it', () => {
    for (const entry of ['localhost', 'a:', ':7000', 'a:b', 'a:7000:1', '::1:7000', '[::1]', 'redis://a:7000', 'a b:7000', 'a:123456']) {
      const outcome = redisNodes(`ok:1,${entry}`);
      expect(outcome).toEqual({ ok: false, message: `must be host:port entries separated by commas (got ${JSON.stringify(entry)})` });
    }
  });

  it('refuses ports out of 1–65535', () => {
    for (const port of ['0', '65536', '99999']) {
      expect(redisNodes(`a:${port}`)).toEqual({ ok: false, message: `must be host:port entries separated by commas (got "a:${port}")` });
    }
    expect(redisNodes('a:65535')).toEqual({ ok: true, value: [{ host: 'a', port: 65535 }] });
  });

  it('takes at most 64 nodes', () => {
    const list = (count: number): string => Array.from({ length: count }, (_, i) => `node-${i}:7000`).join(',');
    expect(redisNodes(list(64))).toMatchObject({ ok: true });
    expect(redisNodes(list(65))).toEqual({ ok: false, message: 'must list at most 64 nodes (got 65)' });
  });

  it('refuses a list without a node', () => {
    expect(redisNodes(',')).toEqual({ ok: false, message: 'must list at least one host:port' });
    expect(redisNodes(' , ,')).toEqual({ ok: false, message: 'must list at least one host:port' });
  });
});

describe('REDIS_CLUSTER_NODES and LOOPFLEET_QUEUE_SHARDS in the configuration', () => {
  it('are configuration variables (the compose file forwards them)', () => {
    expect(CONFIG_VARIABLES).toEqual(expect.arrayContaining(['REDIS_CLUSTER_NODES', 'LOOPFLEET_QUEUE_SHARDS']));
  });

  it('default to one Redis node and one shard', () => {
    expect(loadConfig({})).toMatchObject({ redisClusterNodes: null, queueShards: 1 });
    expect(loadConfig({ REDIS_CLUSTER_NODES: ' ', LOOPFLEET_QUEUE_SHARDS: '' })).toMatchObject({ redisClusterNodes: null, queueShards: 1 });
  });

  it('fill redisClusterNodes and queueShards, for workers and for clients', () => {
    const env = { REDIS_URL: 'rediss://user:pw@ignored:6379', REDIS_CLUSTER_NODES: 'r1:7000,[::1]:7001', LOOPFLEET_QUEUE_SHARDS: '12' };
    const expected = { redisUrl: 'rediss://user:pw@ignored:6379', redisClusterNodes: [{ host: 'r1', port: 7000 }, { host: '::1', port: 7001 }], queueShards: 12 };
    expect(loadConfig(env)).toMatchObject(expected);
    expect(loadClientConfig(env)).toMatchObject(expected);
  });

  it('take one shard on a cluster, and up to 256', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'r1:7000' }).queueShards).toBe(1);
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'r1:7000', LOOPFLEET_QUEUE_SHARDS: '256' }).queueShards).toBe(256);
  });

  it('refuse more than 1 shard without a cluster, naming LOOPFLEET_QUEUE_SHARDS', () => {
    const error = configError({ LOOPFLEET_QUEUE_SHARDS: '3' });
    expect(error.details).toEqual({ variables: ['LOOPFLEET_QUEUE_SHARDS'] });
    expect(error.message).toContain('LOOPFLEET_QUEUE_SHARDS: more than 1 shard needs a Redis Cluster (set REDIS_CLUSTER_NODES)');
  });

  it('refuse a shard count out of 1–256', () => {
    for (const value of ['0', '257', '-1', '2.5', 'many']) {
      const error = configError({ REDIS_CLUSTER_NODES: 'r1:7000', LOOPFLEET_QUEUE_SHARDS: value });
      expect(error.details).toEqual({ variables: ['LOOPFLEET_QUEUE_SHARDS'] });
    }
  });

  it('report a bad node list under REDIS_CLUSTER_NODES, alongside other problems', () => {
    const error = configError({ REDIS_CLUSTER_NODES: 'r1:7000,r2', WORKER_CONCURRENCY: '0' });
    expect(error.details).toEqual({ variables: expect.arrayContaining(['REDIS_CLUSTER_NODES', 'WORKER_CONCURRENCY']) });
    expect(error.message).toContain('REDIS_CLUSTER_NODES: must be host:port entries separated by commas (got "r2")');
  });
});
