import { Queue, Worker } from 'bullmq';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_CLUSTER_MISSING, redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';

/**
 * The facts about Redis Cluster 7.0 and ioredis 5 that the product relies on, recorded against a
 * real six-node cluster (test/support/redis-cluster.ts): hash-tagged keys share a slot and a
 * script; SPUBLISH from inside a script reaches a sharded subscriber; PUBLISH is cluster-wide;
 * BullMQ runs under a hash-tagged prefix; and the client rides through a primary's failover and a
 * live slot migration.
 */
if (!redisClusterAvailable()) console.warn(`Redis Cluster harness: ${REDIS_CLUSTER_MISSING}`);

/**
 * The settings that carry every command across a failover (about 2–3 s with cluster-node-timeout
 * 1000): the redirection budget is maxRedirections tries, spaced by retryDelayOnFailover (connection
 * closed) or retryDelayOnClusterDown (CLUSTERDOWN). ioredis's defaults (100 ms, 100 ms, 16) failed a
 * write with "Too many Cluster redirections" in 4 of 4 runs; raising either the delays or the budget
 * alone passed. slotsRefreshInterval bounds how long a sharded subscription stays on a node that has
 * given its slot away (see the migration test); disabled (0), it never came back.
 */
const CLUSTER_OPTIONS: ClusterOptions = {
  shardedSubscribers: true,
  clusterRetryStrategy: (times) => Math.min(100 * times, 2_000),
  retryDelayOnFailover: 300,
  retryDelayOnClusterDown: 300,
  retryDelayOnTryAgain: 100,
  maxRedirections: 64,
  slotsRefreshTimeout: 2_000,
  slotsRefreshInterval: 2_000,
  redisOptions: { connectTimeout: 2_000 },
};

const PUBLISH_SCRIPT = "redis.call('XADD', KEYS[1], '*', 'n', ARGV[2]) return redis.call('SPUBLISH', ARGV[1], ARGV[2])";
const SHARDNUMSUB_SCRIPT = "return redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[1])[2]";

describe.skipIf(!redisClusterAvailable())('a real Redis Cluster (7.0) through ioredis Cluster', () => {
  let cluster: RunningRedisCluster;
  let client: Cluster;
  let subscriber: Cluster;
  const opened: { close(): Promise<unknown> }[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = track(new Cluster(cluster.nodes, CLUSTER_OPTIONS));
    subscriber = track(new Cluster(cluster.nodes, CLUSTER_OPTIONS));
    // A CLUSTER command skips the offline queue: sent before 'ready', it can go to a replica whose
    // connection the first slots refresh closes ("Connection is closed.", not retried).
    await Promise.all([ready(client), ready(subscriber)]);
  });

  afterAll(async () => {
    await Promise.allSettled(opened.splice(0).reverse().map((item) => item.close()));
    await cluster?.stop();
  });

  function track<T extends Cluster | Redis>(connection: T): T {
    connection.on('error', () => {});
    opened.push({ close: async () => connection.disconnect() });
    return connection;
  }

  it('keeps hash-tagged keys in one slot and refuses a script across slots with CROSSSLOT', async () => {
    const [slotA, slotB, slotOther] = await Promise.all(['x:{s1}:a', 'x:{s1}:b', 'x:{s2}:a'].map(async (key) => Number(await client.cluster('KEYSLOT', key))));
    expect(slotA).toBe(slotB);
    expect(slotOther).not.toBe(slotA);
    const script = "redis.call('SET', KEYS[1], ARGV[1]) redis.call('SET', KEYS[2], ARGV[1]) return redis.call('GET', KEYS[2])";
    expect(await client.eval(script, 2, 'x:{s1}:a', 'x:{s1}:b', 'same-slot')).toBe('same-slot');
    await expect(client.eval(script, 2, 'x:{s1}:a', 'x:{s2}:a', 'cross')).rejects.toThrow(/^CROSSSLOT Keys in request don't hash to the same slot/);
  });

  it('delivers an SPUBLISH made inside a script to a sharded subscriber, and SHARDNUMSUB in a script sees it', async () => {
    const channel = 'x:{s1}:stream:tail';
    const received = collect(subscriber, channel);
    await subscriber.ssubscribe(channel);
    const receivers = await client.eval(PUBLISH_SCRIPT, 1, 'x:{s1}:stream', channel, 'from-lua');
    await until(() => received.includes('from-lua'), 5_000, 'the smessage from the script');
    expect(receivers).toBe(1);
    expect(await client.eval(SHARDNUMSUB_SCRIPT, 1, 'x:{s1}:stream', channel)).toBe(1);
    await subscriber.sunsubscribe(channel);
    expect(await client.eval(SHARDNUMSUB_SCRIPT, 1, 'x:{s1}:stream', channel)).toBe(0);
  });

  it('broadcasts a classic PUBLISH made on any primary to a cluster subscriber', async () => {
    const messages: string[] = [];
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === 'lf:broadcast') messages.push(message);
    });
    await subscriber.subscribe('lf:broadcast');
    const primaries = await cluster.primaries();
    for (const primary of primaries) {
      const direct = track(new Redis({ host: primary.host, port: primary.port }));
      await direct.publish('lf:broadcast', `from:${primary.port}`);
    }
    await until(() => messages.length === primaries.length, 5_000, 'a message from every primary');
    expect(messages.sort()).toEqual(primaries.map((p) => `from:${p.port}`).sort());
  });

  it('runs BullMQ under hash-tagged prefixes, each queue in one slot', async () => {
    const connection = track(new Cluster(cluster.nodes, { ...CLUSTER_OPTIONS, shardedSubscribers: false, redisOptions: { maxRetriesPerRequest: null } }));
    const slots = await Promise.all(['bull:{lf:0}:jobs:id', 'bull:{lf:1}:jobs:id'].map(async (key) => Number(await client.cluster('KEYSLOT', key))));
    console.info(`BullMQ prefixes: bull:{lf:0} in slot ${slots[0]}, bull:{lf:1} in slot ${slots[1]}`);
    expect(slots[0]).not.toBe(slots[1]);
    const runs = ['bull:{lf:0}', 'bull:{lf:1}'].map(async (prefix) => {
      const queue = new Queue('jobs', { connection, prefix });
      let done = 0;
      const worker = new Worker('jobs', async (job) => job.data.n * 2, { connection, prefix, concurrency: 10 });
      opened.push(worker, queue);
      const all = new Promise<void>((resolve) => worker.on('completed', () => ++done === 50 && resolve()));
      await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ name: 'job', data: { n } })));
      await all;
      expect(await queue.getCompletedCount()).toBe(50);
      await worker.close();
    });
    await Promise.all(runs);
  });

  it('writes, reads and receives SPUBLISHes again after the primary of x:{s1} is SIGKILLed', async () => {
    const channel = 'x:{s1}:stream:tail';
    const received = collect(subscriber, channel);
    await subscriber.ssubscribe(channel);
    await publishUntilReceived(client, 'x:{s1}:stream', channel, received, 'before');
    const errors: string[] = [];
    let writes = 0;
    let failingOver = true;
    const writer = (async () => {
      while (failingOver) {
        await client.set('x:{s1}:a', `v${++writes}`).catch((error: Error) => errors.push(error.message));
      }
    })();
    const { killed, promoted } = await cluster.killPrimaryForKey('x:{s1}:a');
    const written = writes;
    await until(() => writes > written + 2, 10_000, 'a write after the promotion');
    failingOver = false;
    await writer;
    console.info(`failover: :${killed.port} -> :${promoted.port}; ${writes} writes, errors: ${JSON.stringify(errors.slice(0, 3))} (${errors.length})`);
    expect(errors).toEqual([]);
    expect(await client.get('x:{s1}:a')).toBe(`v${writes}`);
    // The sharded subscriber was on the killed node; it comes back without help.
    const back = await publishUntilReceived(client, 'x:{s1}:stream', channel, received, 'after');
    console.info(`failover: the sharded subscriber received publish #${back.first} of ${back.sent}, ${back.ms} ms after the promotion was seen`);
  });

  it('loses and doubles no XADD while the slot of x:{s2} migrates live, and the sharded subscriber keeps receiving', async () => {
    const channel = 'x:{s2}:stream:tail';
    // A subscriber client of its own, with no refreshes still pending from the failover above.
    const fresh = track(new Cluster(cluster.nodes, CLUSTER_OPTIONS));
    await ready(fresh);
    const received = collect(fresh, channel);
    await fresh.ssubscribe(channel);
    await client.eval(PUBLISH_SCRIPT, 1, 'x:{s2}:stream', channel, 'before');
    await until(() => received.includes('before'), 5_000, 'the smessage before the migration');
    const slot = Number(await client.cluster('KEYSLOT', 'x:{s2}:a'));
    const source = await cluster.primaryForKey('x:{s2}:a');
    const target = (await cluster.primaries()).find((p) => p.id !== source.id)!;
    const errors: string[] = [];
    let acked = 0;
    let migrating = true;
    const writer = (async () => {
      while (migrating || acked < 200) {
        await client
          .xadd('x:{s2}:stream', '*', 'n', String(acked))
          .then(() => acked++)
          .catch((error: Error) => errors.push(error.message));
      }
    })();
    await until(() => acked >= 100, 10_000, '100 writes before the migration');
    const ackedBefore = acked;
    await cluster.migrateSlot(slot, target.id);
    const ackedDuring = acked - ackedBefore;
    migrating = false;
    await writer;
    expect(errors).toEqual([]);
    expect((await cluster.primaryForKey('x:{s2}:a')).id).toBe(target.id);
    const entries = await client.xrange('x:{s2}:stream', '-', '+');
    const numbers = entries.map(([, fields]) => fields[1]).filter((n) => n !== 'before');
    expect(numbers).toEqual(Array.from({ length: acked }, (_, n) => String(n)));
    // The source pushed `sunsubscribe` to the subscriber when the slot left it; ioredis does not react
    // to that, and re-subscribes on the new owner at its subscriber client's next slots refresh.
    const direct = track(new Redis({ host: source.host, port: source.port }));
    expect(await direct.call('PUBSUB', 'SHARDNUMSUB', channel)).toEqual([channel, 0]);
    const back = await publishUntilReceived(client, 'x:{s2}:stream:pings', channel, received, 'after');
    console.info(`migration of slot ${slot}: ${acked} XADDs, ${ackedDuring} during it; the sharded subscriber received publish #${back.first} of ${back.sent}, ${back.ms} ms after the migration`);
  });
});

async function ready(connection: Cluster): Promise<void> {
  if (connection.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    connection.once('ready', resolve);
    connection.once('end', () => reject(new Error('cluster client ended before ready')));
  });
}

/** SPUBLISHes `label:1`, `label:2`, … from a script every 50 ms until the subscriber gets one; which one came first, and when. */
async function publishUntilReceived(client: Cluster, key: string, channel: string, received: string[], label: string): Promise<{ first: number; sent: number; ms: number }> {
  const started = Date.now();
  const mine = (message: string): boolean => message.startsWith(`${label}:`);
  let sent = 0;
  await untilAsync(async () => {
    await client.eval(PUBLISH_SCRIPT, 1, key, channel, `${label}:${++sent}`);
    return received.some(mine);
  }, 10_000, `an smessage on ${channel}`);
  const first = Number(received.find(mine)!.slice(label.length + 1));
  return { first, sent, ms: Date.now() - started };
}

function collect(subscriber: Cluster, wanted: string): string[] {
  const messages: string[] = [];
  subscriber.on('smessage', (channel: string, message: string) => {
    if (channel === wanted) messages.push(message);
  });
  return messages;
}

async function until(check: () => boolean, deadlineMs: number, what: string): Promise<void> {
  await untilAsync(async () => check(), deadlineMs, what);
}

async function untilAsync(check: () => Promise<boolean>, deadlineMs: number, what: string): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
