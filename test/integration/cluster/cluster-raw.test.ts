import { Queue } from 'bullmq';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawOrderKey } from '../../../src/fleet/fleet-keys.js';
import { shardKeyRoot, shardOf, shardPrefix } from '../../../src/fleet/redis-layout.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { countSocketWrites } from '../../support/socket-writes.js';
import { redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';

const SHARDS = 3;

/**
 * The raw path on a Redis Cluster (docs/redis-cluster.md, "Raw BullMQ producers"): a plain BullMQ
 * producer adds `send` jobs to the queue of each session's shard (prefix `bull:{<queue>:<shard>}`);
 * the workers ingest them once, in add order per session.
 */
describe.skipIf(!redisClusterAvailable())('raw BullMQ producers on a Redis Cluster', () => {
  let cluster: RunningRedisCluster;
  let fleet: FleetFixture;
  const producers: Queue[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    fleet = await FleetFixture.create('cluster_raw', { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: String(SHARDS), WORKER_CONCURRENCY: '6' });
    // What a producer in any language does: one BullMQ queue per shard, named LOOPFLEET_QUEUE.
    for (let shard = 0; shard < SHARDS; shard += 1) {
      producers.push(new Queue(fleet.config.queueName, { connection: fleet.redis, prefix: shardPrefix(fleet.shards.layout, shard) }));
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(producers.map((producer) => producer.close()));
    await fleet?.close();
    await cluster?.stop();
  });

  it("jobs added to each session's shard, before any worker runs, are ingested once and run in add order", async () => {
    const { layout } = fleet.shards;
    // Three sessions on each shard.
    const candidates = Array.from({ length: 100 }, (_, i) => `raw-${i}`);
    const sessions = [0, 1, 2].flatMap((shard) => candidates.filter((sessionId) => shardOf(layout, sessionId) === shard).slice(0, 3));
    expect(sessions).toHaveLength(9);
    const added = new Map<string, string[]>(sessions.map((sessionId) => [sessionId, []]));
    for (let i = 0; i < 90; i += 1) {
      const sessionId = sessions[i % sessions.length]!;
      const input = `message ${i}`;
      await producers[shardOf(layout, sessionId)]!.add('send', { sessionId, input });
      added.get(sessionId)!.push(input);
    }
    await Promise.all([fleet.startWorker(), fleet.startWorker()]);
    for (const sessionId of sessions) {
      const inputs = await fleet.waitForSessionIdle(sessionId, 10, 60_000);
      expect(inputs.map((input) => input.payload.input)).toEqual(added.get(sessionId));
      expect(inputs.every((input) => input.status === 'done')).toBe(true);
      // The session's raw-order line, under its shard's tag, is empty again.
      expect(await fleet.redis.zcard(rawOrderKey(shardKeyRoot(layout, shardOf(layout, sessionId)), sessionId))).toBe(0);
    }
    expect(await fleet.pool.query('SELECT count(*)::int AS n FROM session_inputs').then((result) => result.rows[0].n)).toBe(90);
  }, 120_000);

  it("the cluster client's node connections send one turn's commands for a node in one write", async () => {
    const client = fleet.redis as Cluster;
    const key = `{coalesce}:${Date.now()}`;
    await client.set(key, '0');
    const owner = await cluster.primaryForKey(key);
    const node = client.nodes('master').find((candidate) => candidate.options.port === owner.port)!;
    const counted = countSocketWrites(node);
    const replies = await Promise.all(Array.from({ length: 30 }, () => client.incr(key)));
    expect(replies).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(counted).toEqual({ writes: 1, chunks: 30 });
    await client.del(key);
  });
});
