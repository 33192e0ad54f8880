import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { drainDedupId, JOB, timerJobId } from '../../../src/fleet/fleet-keys.js';
import { Worker as BullWorker, type Job } from 'bullmq';
import { duplicateRedis } from '../../../src/fleet/redis-connection.js';
import { shardOf, shardPrefix } from '../../../src/fleet/redis-layout.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { getTimer } from '../../../src/store/timers/timer-queries.js';
import type { SweepReport } from '../../../src/worker/sweep-job.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { REDIS_CLUSTER_MISSING, redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';

const SHARDS = 3;
const FAST_SWEEPER = { sweepEveryMs: 300, sweepGraceMs: 200 } as const;

/**
 * Durable timers and the sweeper on a Redis Cluster with 3 queue shards: a timer's alarm is a delayed
 * job on its session's shard and fires there; the sweeper (scheduled on shard 0) runs inputs whose
 * kick was lost, removes a deduplication key naming a job that is gone, and sets again a lost alarm —
 * for sessions of every shard.
 */
describe.skipIf(!redisClusterAvailable())('timers and the sweeper on a Redis Cluster', () => {
  let cluster: RunningRedisCluster;
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    fleet = await FleetFixture.create('ctimers', { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: String(SHARDS) });
    queue = new SessionQueue({ pool: fleet.pool, redisClusterNodes: cluster.nodesEnv, queueShards: SHARDS, queueName: fleet.config.queueName });
  }, 60_000);

  afterEach(async () => {
    await Promise.allSettled(fleet.workers.splice(0).map((worker) => worker.close({ graceMs: 2_000 })));
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
    await cluster?.stop();
  });

  /** One session id per shard: `<prefix>-<n>` for the first n landing on each. */
  function onePerShard(prefix: string): string[] {
    const found: string[] = [];
    for (let n = 0; found.length < SHARDS; n += 1) {
      const id = `${prefix}-${n}`;
      if (found.every((other) => shardOf(fleet.shards.layout, other) !== shardOf(fleet.shards.layout, id))) found.push(id);
    }
    return found.sort((a, b) => shardOf(fleet.shards.layout, a) - shardOf(fleet.shards.layout, b));
  }

  /** Drain jobs of `sessions` waiting or delayed on their shards. */
  async function drainsOf(sessions: string[]): Promise<string[]> {
    const jobs = await Promise.all(fleet.shards.queues.map((shardQueue) => shardQueue.getJobs(['waiting', 'prioritized', 'delayed', 'active'])));
    return jobs.flat().filter((job) => job.name === JOB.drain && sessions.includes(job.data.sessionId as string)).map((job) => job.id!);
  }

  async function firedEvents(sessionId: string): Promise<Array<Record<string, unknown>>> {
    return (await sessionEvents(fleet.redis, fleet.shards.layout, sessionId)).filter((event) => event.type === 'timer_fired').map((event) => event.data);
  }

  /** Return values of the sweep jobs that ran (on shard 0, the sweeper's home), oldest first. */
  async function sweepReports(): Promise<SweepReport[]> {
    const entries = await fleet.redis.xrange(`${fleet.shards.home.qualifiedName}:events`, '-', '+');
    return entries
      .map(([, raw]) => Object.fromEntries(Array.from({ length: raw.length / 2 }, (_, i) => [raw[2 * i]!, raw[2 * i + 1]!])) as Record<string, string>)
      .filter((fields) => fields.event === 'completed' && fields.returnvalue?.includes('"stranded"') === true)
      .map((fields) => JSON.parse(fields.returnvalue!) as SweepReport);
  }

  it("a timer's alarm waits on its session's shard and fires there: one-shot on every shard, a recurring one until cancelled", async () => {
    const sessions = onePerShard('ct-once');
    for (const sessionId of sessions) await queue.timers.schedule(sessionId, { delayMs: 0, note: `ring ${sessionId}`, timerId: 'ring' });
    const recurring = sessions[SHARDS - 1]!;
    await queue.timers.schedule(recurring, { delayMs: 0, everyMs: 1000, note: 'poll', timerId: 'poll' });
    // Before any worker runs: each alarm is a job of its own shard's queue, and of no other.
    for (const sessionId of sessions) {
      const shard = shardOf(fleet.shards.layout, sessionId);
      for (const [index, shardQueue] of fleet.shards.queues.entries()) {
        expect(Boolean(await shardQueue.getJob(timerJobId(sessionId, 'ring', 0))), `alarm of ${sessionId} on shard ${index}`).toBe(index === shard);
      }
    }
    await fleet.startWorker();
    for (const sessionId of sessions.slice(0, -1)) {
      const [input] = await fleet.waitForSessionIdle(sessionId, 1);
      expect(input).toMatchObject({ kind: 'timer', inputId: 'timer:ring:1', status: 'done', payload: { note: `ring ${sessionId}`, fireCount: 1 } });
      await fleet.waitFor('the firing recorded', async () => ((await getTimer(fleet.pool, sessionId, 'ring'))?.status === 'fired' ? true : undefined));
      expect(await fleet.waitFor('timer_fired', async () => ((await firedEvents(sessionId)).length > 0 ? firedEvents(sessionId) : undefined))).toEqual([
        expect.objectContaining({ timerId: 'ring', fireCount: 1, outcome: 'delivered', inputSeq: 1 }),
      ]);
    }
    // The last shard's session: its one-shot and two firings of the recurring timer.
    await fleet.waitFor('two firings of poll', async () => ((await getTimer(fleet.pool, recurring, 'poll'))!.fireCount >= 2 ? true : undefined));
    expect(await queue.timers.cancel(recurring, 'poll')).toBe(true);
    const inputs = await fleet.waitForSessionIdle(recurring, 3);
    expect(inputs.map((input) => input.inputId).sort()).toEqual(expect.arrayContaining(['timer:ring:1', 'timer:poll:1', 'timer:poll:2']));
    expect(inputs.every((input) => input.kind === 'timer' && input.status === 'done')).toBe(true);
  }, 45_000);

  it('the sweeper runs inputs whose kick was lost, on every shard', async () => {
    const sessions = onePerShard('ct-lost-kick');
    for (const sessionId of sessions) await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: `never kicked ${sessionId}` }, maxBytes: 1 << 20 });
    expect(await drainsOf(sessions)).toEqual([]);
    await fleet.startWorker({ settings: FAST_SWEEPER });
    for (const sessionId of sessions) {
      const [input] = await fleet.waitForSessionIdle(sessionId, 1);
      expect(input).toMatchObject({ status: 'done', attempts: 1, result: { finalText: `Echo: never kicked ${sessionId}` } });
    }
    expect((await sweepReports()).reduce((sum, report) => sum + report.kicked, 0)).toBeGreaterThanOrEqual(SHARDS);
  }, 45_000);

  it('the sweeper removes a stray deduplication key naming a drain job that does not exist (R9), on every shard', async () => {
    const sessions = onePerShard('ct-stray');
    const before = (await sweepReports()).reduce((sum, report) => sum + report.strayKeysRemoved, 0);
    for (const sessionId of sessions) {
      await fleet.redis.set(`${fleet.shards.for(sessionId).qualifiedName}:de:${drainDedupId(sessionId)}`, 'no-such-job');
      await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'behind a stray key' }, maxBytes: 1 << 20 });
    }
    await fleet.startWorker({ settings: FAST_SWEEPER });
    for (const sessionId of sessions) {
      const [input] = await fleet.waitForSessionIdle(sessionId, 1);
      expect(input).toMatchObject({ status: 'done', result: { finalText: 'Echo: behind a stray key' } });
    }
    const removed = (await sweepReports()).reduce((sum, report) => sum + report.strayKeysRemoved, 0) - before;
    expect(removed).toBeGreaterThanOrEqual(SHARDS);
  }, 45_000);

  it('R2/kill -9: a drain left active by a dead worker on shards 1 and 2 (its lock valid for minutes) does not hold its session', async () => {
    const sessions = onePerShard('ct-dead').slice(1);
    const before = (await sweepReports()).reduce((sum, report) => sum + report.strayKeysRemoved, 0);
    const connection = duplicateRedis(fleet.redis, { maxRetriesPerRequest: null });
    const dead: BullWorker[] = [];
    try {
      for (const sessionId of sessions) {
        const shard = shardOf(fleet.shards.layout, sessionId);
        await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'first' } });
        // The dead worker took the drain job on the session's shard and never finishes it.
        const worker = new BullWorker(fleet.config.queueName, undefined, { connection, prefix: shardPrefix(fleet.shards.layout, shard), autorun: false, lockDuration: 600_000 });
        dead.push(worker);
        const job = (await worker.getNextJob('dead-worker', { block: false })) as Job | undefined;
        expect(job?.name).toBe(JOB.drain);
        expect(job?.data.sessionId).toBe(sessionId);
        // A later kick is kept for when that job finishes — which it never does.
        await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'second' } });
        expect(await job!.getState()).toBe('active');
      }
      await fleet.startWorker({ settings: FAST_SWEEPER });
      for (const sessionId of sessions) {
        const inputs = await fleet.waitForSessionIdle(sessionId, 2);
        expect(inputs.map((input) => [input.status, input.result?.finalText])).toEqual([
          ['done', 'Echo: first'],
          ['done', 'Echo: second'],
        ]);
      }
      const removed = (await sweepReports()).reduce((sum, report) => sum + report.strayKeysRemoved, 0) - before;
      expect(removed).toBeGreaterThanOrEqual(sessions.length);
    } finally {
      await Promise.all(dead.map((worker) => worker.close(true)));
      await connection.quit();
    }
  }, 45_000);

  it('the sweeper sets again an overdue alarm Redis lost, on every shard', async () => {
    const sessions = onePerShard('ct-lost-alarm');
    for (const sessionId of sessions) {
      await queue.timers.schedule(sessionId, { delayMs: 0, note: 'lost alarm', timerId: 'lost' });
      expect(await fleet.shards.for(sessionId).remove(timerJobId(sessionId, 'lost', 0))).toBe(1);
    }
    await fleet.startWorker({ settings: FAST_SWEEPER });
    for (const sessionId of sessions) {
      const [input] = await fleet.waitForSessionIdle(sessionId, 1);
      expect(input).toMatchObject({ kind: 'timer', inputId: 'timer:lost:1', status: 'done' });
      await fleet.waitFor('the firing recorded', async () => ((await getTimer(fleet.pool, sessionId, 'lost'))?.status === 'fired' ? true : undefined));
    }
    expect((await sweepReports()).reduce((sum, report) => sum + report.timersRearmed, 0)).toBeGreaterThanOrEqual(SHARDS);
  }, 45_000);
});

if (!redisClusterAvailable()) console.warn(REDIS_CLUSTER_MISSING);
