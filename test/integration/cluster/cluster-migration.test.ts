import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { eventStreamKey, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { calculateSlot, shardKeyRoot, shardOf } from '../../../src/fleet/redis-layout.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { REDIS_CLUSTER_MISSING, redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';
import { doneInputs, expectRanOnceInOrder, openInputs, sendRounds, sessionsOverShards } from './fixtures/cluster-checks.js';

const SHARDS = 3;
const SESSIONS = 12;
const INPUTS = 5;
/** Keys added to the slot before it moves. */
const FILLER = 20_000;

/**
 * A slot of the Redis Cluster moved to another primary mid-run (IMPORTING/MIGRATING, MIGRATE, SETSLOT
 * NODE, as `redis-cli --cluster reshard` does), while a `loopfleet worker` process runs inputs and a
 * follower is subscribed: the client follows ASK/MOVED and TRYAGAIN, nothing is lost or doubled on the
 * streams (gapless seq, one finish per input), and the follower, whose sharded subscription the old
 * owner dropped, still sees every event up to the last `input_finished`.
 */
describe.skipIf(!redisClusterAvailable())('live slot migration on a Redis Cluster during a run', () => {
  let cluster: RunningRedisCluster;
  let pf: ProcessFleet;
  let queue: SessionQueue;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    pf = await ProcessFleet.create(
      'cmigrate',
      { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: String(SHARDS), LEASE_TTL_MS: '2000', WORKER_CONCURRENCY: '6', SWEEP_EVERY_MS: '1000', SWEEP_GRACE_MS: '500' },
      { replyDelayMs: 300 },
    );
    queue = new SessionQueue({ pool: pf.fleet.pool, redisClusterNodes: cluster.nodesEnv, queueShards: SHARDS, queueName: pf.fleet.config.queueName });
    await pf.fleet.processes.start(pf.workerEnv);
  }, 60_000);

  afterAll(async () => {
    await queue?.close();
    await pf?.close();
    await cluster?.stop();
  });

  /** Follows `sessionId` from the start until `finishes` input_finished events; resolves with the seqs seen. */
  function follow(sessionId: string, finishes: number, signal: AbortSignal): Promise<number[]> {
    return (async () => {
      const seqs: number[] = [];
      let finished = 0;
      for await (const item of queue.subscribe(sessionId, { after: '0', signal })) {
        if (item.kind !== 'event') continue;
        seqs.push(Number(item.data.seq));
        if (item.type === 'input_finished' && ++finished === finishes) break;
      }
      return seqs;
    })();
  }

  /** Waits until the sharded tail channel of `sessionId` has a subscriber on its node. */
  async function subscribed(sessionId: string): Promise<void> {
    const channel = tailChannel(pf.fleet.shards.layout, sessionId);
    await pf.fleet.waitFor(`the sharded subscription of ${sessionId}`, async () => {
      const owner = await cluster.primaryForKey(channel);
      const node = new Redis(owner.port, owner.host, { lazyConnect: true });
      try {
        const [, count] = (await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
        return count > 0 ? true : undefined;
      } finally {
        node.disconnect();
      }
    });
  }

  /** Another live primary than the one owning `slot`. */
  async function otherPrimary(slot: number): Promise<string> {
    const primaries = await cluster.primaries();
    const target = primaries.find((primary) => !primary.slots.some(([from, to]) => slot >= from && slot <= to));
    expect(target).toBeDefined();
    return target!.id;
  }

  /**
   * Fills the slot with `FILLER` keys under `tag` so that the move (MIGRATE in batches of 100) takes
   * about a second: long enough that the worker's writes meet ASK and TRYAGAIN while it goes on.
   */
  async function fill(tag: string): Promise<void> {
    for (let from = 0; from < FILLER; from += 1_000) {
      const pipeline = pf.fleet.redis.pipeline();
      for (let i = from; i < from + 1_000; i += 1) pipeline.set(`${tag}:filler:${i}`, 'x');
      await pipeline.exec();
    }
  }

  async function runThrough(prefix: string, slotOf: (sessions: string[]) => { slot: number; busy: string; tag: string }) {
    const { fleet } = pf;
    const sessions = sessionsOverShards(fleet, prefix, SESSIONS);
    const { slot, busy, tag } = slotOf(sessions);
    await fill(tag);
    expect(calculateSlot(`${tag}:filler:0`)).toBe(slot);
    const stop = new AbortController();
    const following = follow(busy, INPUTS + 1, stop.signal);
    try {
      await subscribed(busy);
      await sendRounds(fleet, sessions, INPUTS);
      await fleet.waitFor('the busy session under way', async () => ((await doneInputs(fleet, [busy])) >= 1 ? true : undefined), 30_000);
      const openAtMove = await openInputs(fleet, sessions);
      expect(await openInputs(fleet, [busy])).toBeGreaterThan(0);
      const from = (await cluster.primaries()).find((primary) => primary.slots.some(([a, b]) => slot >= a && slot <= b))!;
      const to = await otherPrimary(slot);
      const started = Date.now();
      await cluster.migrateSlot(slot, to);
      const movedMs = Date.now() - started;
      const openAfter = await openInputs(fleet, sessions);
      await fleet.waitFor('every input finished', async () => ((await openInputs(fleet, sessions)) === 0 ? true : undefined), 30_000).catch((error: Error) => {
        throw new Error(`${error.message}\n${fleet.processes.diagnostics()}`);
      });
      await sendRounds(fleet, sessions, 1, INPUTS);
      for (const sessionId of sessions) await expectRanOnceInOrder(fleet, sessionId, INPUTS + 1);
      // The follower saw every event of the busy session, in order, up to its last input_finished.
      const { events } = await expectRanOnceInOrder(fleet, busy, INPUTS + 1);
      const seen = await following;
      expect(seen).toEqual(events.map((event) => Number(event.data.seq)));
      expect(fleet.processes.alive.length).toBe(1);
      console.info(`${prefix}: slot ${slot} moved :${from.port} → ${to.slice(0, 8)} in ${movedMs} ms; ${openAtMove} inputs open at the move, ${openAfter} after; follower saw ${seen.length} events`);
    } finally {
      stop.abort();
      await following.catch(() => undefined);
    }
  }

  it("the slot of a busy, followed session's event keys moves mid-run: nothing lost or doubled, the follower sees every event", async () => {
    const { fleet } = pf;
    await runThrough('mv-events', (sessions) => {
      const busy = sessions[0]!;
      return { busy, slot: calculateSlot(eventStreamKey(fleet.shards.layout, busy)), tag: shardKeyRoot(fleet.shards.layout, shardOf(fleet.shards.layout, busy)) };
    });
  }, 60_000);

  it("the slot of a shard's BullMQ keys moves mid-run: its drains go on, every input finishes once, in order", async () => {
    const { fleet } = pf;
    await runThrough('mv-bull', (sessions) => {
      const busy = sessions.find((sessionId) => shardOf(fleet.shards.layout, sessionId) === 1)!;
      return { busy, slot: calculateSlot(`${fleet.shards.queues[1]!.qualifiedName}:meta`), tag: fleet.shards.queues[1]!.qualifiedName };
    });
  }, 60_000);
});

if (!redisClusterAvailable()) console.warn(REDIS_CLUSTER_MISSING);
