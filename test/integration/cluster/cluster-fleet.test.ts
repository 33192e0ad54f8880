import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { eventStreamKey, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { calculateSlot, shardOf } from '../../../src/fleet/redis-layout.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { REDIS_CLUSTER_MISSING, redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';

const SHARDS = 3;

/**
 * The fleet on a real Redis Cluster (3 primaries, 3 replicas): dispatch over 3 queue shards, event
 * streams hash-tagged by session, followers on sharded channels (docs/redis-cluster.md).
 */
describe.skipIf(!redisClusterAvailable())('the fleet on a Redis Cluster', () => {
  let cluster: RunningRedisCluster;
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    fleet = await FleetFixture.create('cluster', { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: String(SHARDS) });
    await fleet.startWorker();
    queue = new SessionQueue({ pool: fleet.pool, redisClusterNodes: cluster.nodesEnv, queueShards: SHARDS, queueName: fleet.config.queueName });
  }, 60_000);

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
    await cluster?.stop();
  });

  it('runs every input of many sessions once and in order, spread over the shards', async () => {
    const sessions = Array.from({ length: 12 }, (_, i) => `c-${i}`);
    const handles = [];
    for (let round = 1; round <= 3; round += 1) {
      for (const sessionId of sessions) handles.push(await queue.add('send', { sessionId, input: `${sessionId} #${round}` }));
    }
    const results = await Promise.all(handles.map((handle) => handle.result({ timeoutMs: 60_000 })));
    expect(results.every((result) => result.status === 'completed')).toBe(true);
    for (const sessionId of sessions) {
      const inputs = await fleet.waitForSessionIdle(sessionId, 3);
      expect(inputs.map((input) => input.result?.finalText)).toEqual([1, 2, 3].map((round) => `Echo: ${sessionId} #${round}`));
      const events = await sessionEvents(fleet.redis, fleet.shards.layout, sessionId);
      // Gapless seq, one input_finished per input.
      expect(events.map((event) => event.data.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq)).toEqual([1, 2, 3]);
    }
    // The sessions used every shard, and each shard's queue ran drains.
    const used = new Set(sessions.map((sessionId) => shardOf(fleet.shards.layout, sessionId)));
    expect(used.size).toBe(SHARDS);
    // BullMQ's job id counter of each shard's queue: every shard was given jobs.
    const added = await Promise.all(fleet.shards.queues.map(async (shard) => Number(await fleet.redis.get(`${shard.qualifiedName}:id`))));
    expect(added.every((count) => count > 0)).toBe(true);
  }, 120_000);

  it("keeps a session's stream in the slot of its queue shard: under the shard's hash tag", async () => {
    const sessionId = 'tagged-1';
    await (await queue.add('send', { sessionId, input: 'hi' })).result({ timeoutMs: 30_000 });
    const shard = shardOf(fleet.shards.layout, sessionId);
    const key = eventStreamKey(fleet.shards.layout, sessionId);
    expect(key).toBe(`{${fleet.config.queueName}:${shard}}:events:${sessionId}`);
    expect(calculateSlot(key)).toBe(calculateSlot(`${fleet.shards.queues[shard]!.qualifiedName}:wait`));
    expect(await fleet.redis.xlen(key)).toBeGreaterThan(0);
  }, 60_000);

  it('follows a session live through subscribe(), on its sharded tail channel', async () => {
    const sessionId = 'followed-1';
    const stop = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const item of queue.subscribe(sessionId, { after: '0', signal: stop.signal })) {
        if (item.kind !== 'event') continue;
        seen.push(item.type);
        if (item.type === 'input_finished') break;
      }
    })();
    // The follower's sharded subscription is on the node that owns the session's slot.
    const channel = tailChannel(fleet.shards.layout, sessionId);
    const owner = await cluster.primaryForKey(channel);
    const node = new Redis(owner.port, owner.host);
    try {
      await fleet.waitFor('the sharded subscription', async () => {
        const [, count] = (await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
        return count > 0 ? true : undefined;
      });
    } finally {
      node.disconnect();
    }
    await queue.add('send', { sessionId, input: 'live' });
    await following;
    stop.abort();
    expect(seen[0]).toBe('input_accepted');
    expect(seen.at(-1)).toBe('input_finished');
  }, 60_000);
});

if (!redisClusterAvailable()) console.warn(REDIS_CLUSTER_MISSING);
