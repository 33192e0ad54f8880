import { Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaveFairLine, trimFairLines } from '../../../src/fleet/fair-line.js';
import { fairLineKey, fairTenantsKey } from '../../../src/fleet/fleet-keys.js';
import { kickSession, type FairDispatch } from '../../../src/fleet/kick.js';
import { fairDispatch, tenantSettingsCache } from '../../../src/store/tenants/tenant-settings-source.js';
import { waitingDrains } from '../../../src/worker/waiting-drains.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/**
 * The lines of fair dispatch (docs/fair-dispatch.md) on real Redis and Postgres, without a loopfleet
 * worker: kicks give drains the priority of their place in their tenant's line scaled by the weight in
 * `tenant_settings`, and BullMQ then serves the tenants in turns.
 */
describe('fair dispatch lines and weights', () => {
  let fleet: FleetFixture;
  let fair: FairDispatch;

  beforeAll(async () => {
    fleet = await FleetFixture.create('fair_lines');
    fair = fairDispatch(true, tenantSettingsCache(fleet.pool, (error) => { throw error; }), fleet.redis)!;
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const kick = (tenant: string, sessionId: string) => kickSession({ queue: fleet.shards, fair }, { sessionId, tenant });

  async function served(count: number): Promise<string[]> {
    const order: string[] = [];
    const connection = fleet.redis.duplicate();
    const worker = new Worker(
      fleet.config.queueName,
      async (job: Job) => {
        order.push(job.data.sessionId as string);
        await leaveFairLine(fleet.redis, fleet.config.queueName, job.data.tenant as string, job.data.sessionId as string);
      },
      { connection, concurrency: 1 },
    );
    try {
      await fleet.waitFor(`${count} drains served`, async () => (order.length >= count ? true : undefined));
    } finally {
      await worker.close();
      await connection.quit();
    }
    return order;
  }

  it('serves tenants in turns, weighted: a flood does not push another tenant back', async () => {
    await fleet.pool.query(`INSERT INTO tenant_settings (tenant, weight) VALUES ('gold', 200)`);
    // A floods first; B and gold (weight 200) come later with fewer sessions each.
    for (let i = 1; i <= 8; i += 1) await kick('flood', `a${i}`);
    for (let i = 1; i <= 3; i += 1) await kick('small', `b${i}`);
    for (let i = 1; i <= 4; i += 1) await kick('gold', `g${i}`);
    // An absorbed kick keeps its place.
    await kick('flood', 'a1');
    expect(await fleet.redis.zcard(fairLineKey(fleet.config.queueName, 'flood'))).toBe(8);
    const prioritized = await fleet.queue.getPrioritized();
    const priorities = Object.fromEntries(prioritized.map((job) => [job.data.sessionId as string, job.priority]));
    expect(priorities).toMatchObject({ a1: 1, a2: 2, a8: 8, b1: 1, b3: 3, g1: 1, g2: 1, g3: 2, g4: 2 });

    const order = await served(15);
    // Priority 1: a1, b1, g1, g2 (in kick order); then 2: a2, b2, g3, g4; then 3: a3, b3; then a4…
    expect(order).toEqual(['a1', 'b1', 'g1', 'g2', 'a2', 'b2', 'g3', 'g4', 'a3', 'b3', 'a4', 'a5', 'a6', 'a7', 'a8']);
    // Every drain left its line as it started; the tenants set is trimmed once the lines are empty.
    for (const tenant of ['flood', 'small', 'gold']) expect(await fleet.redis.zcard(fairLineKey(fleet.config.queueName, tenant))).toBe(0);
    expect(await trimFairLines(fleet.redis, fleet.config.queueName, fleet.queue.qualifiedName, 0)).toBe(0);
    expect(await fleet.redis.smembers(fairTenantsKey(fleet.config.queueName))).toEqual([]);
  });

  it('a member left by a lost ZREM is trimmed by the sweeper\'s script, so ranks heal', async () => {
    await kick('healing', 'h1');
    // h1's drain ran but its ZREM was lost: the job is gone, the member stays.
    await served(1);
    await fleet.redis.zadd(fairLineKey(fleet.config.queueName, 'healing'), Date.now() - 60_000, 'h1');
    await kick('healing', 'h2');
    expect((await fleet.queue.getPrioritized())[0]?.priority).toBe(2);
    // Members younger than the age are left alone (a kick joins before it adds its job).
    expect(await trimFairLines(fleet.redis, fleet.config.queueName, fleet.queue.qualifiedName, 3_600_000)).toBe(0);
    // h2 has its job (deduplication key): kept; h1 has none: removed.
    expect(await trimFairLines(fleet.redis, fleet.config.queueName, fleet.queue.qualifiedName, 0)).toBe(1);
    expect(await fleet.redis.zrange(fairLineKey(fleet.config.queueName, 'healing'), 0, -1)).toEqual(['h2']);
    await served(1);
  });

  it('the sweeper tells sessions whose drain waits (prioritized or delayed) in one call', async () => {
    await kick('sweepme', 'w1');
    await fleet.queue.add('drain', { sessionId: 'w2' }, { deduplication: { id: 'drain:w2', keepLastIfActive: true }, delay: 60_000, removeOnComplete: true });
    const waiting = await waitingDrains(fleet.redis, fleet.shards, ['w1', 'w2', 'nothing']);
    expect([...waiting].sort()).toEqual(['w1', 'w2']);
    await fleet.queue.obliterate({ force: true });
  });
});
