import { Worker as BullWorker, UnrecoverableError, type Job } from 'bullmq';
import { duplicateRedis, type RedisConnection } from '../../../src/fleet/redis-connection.js';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { drainDedupId, JOB } from '../../../src/fleet/fleet-keys.js';
import { kickSession } from '../../../src/fleet/kick.js';
import type { SweepReport } from '../../../src/worker/sweep-job.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { queueEvents } from './fixtures/fleet-helpers.js';

/**
 * The sweeper (I1; races R3, R4, R9 and the dead-holder case of R2): inputs whose kick was
 * lost, whose drain job failed for good, whose deduplication key is stray, or whose drain job is stuck
 * `active` on a worker that died, are all run. Each case is arranged with no worker running, so
 * nothing but the sweeper of the worker started afterwards can find the input.
 */

const FAST_SWEEPER = { sweepEveryMs: 300, sweepGraceMs: 200 } as const;

/** Return values of the sweep jobs that ran, oldest first. */
async function sweepReports(redis: RedisConnection, queueName: string): Promise<SweepReport[]> {
  return (await queueEvents(redis, queueName))
    .filter((entry) => entry.event === 'completed' && entry.fields.returnvalue?.includes('"stranded"') === true)
    .map((entry) => JSON.parse(entry.fields.returnvalue!) as SweepReport);
}

describe('the sweeper recovers every stranded input (R2 dead holder, R3, R4, R9)', () => {
  const fleets: FleetFixture[] = [];
  const connections: RedisConnection[] = [];
  const manualWorkers: BullWorker[] = [];

  afterEach(async () => {
    await Promise.all(manualWorkers.splice(0).map((worker) => worker.close(true)));
    await Promise.all(connections.splice(0).map((connection) => connection.quit()));
    await Promise.all(fleets.splice(0).map((fleet) => fleet.close()));
  });

  async function newFleet(label: string): Promise<FleetFixture> {
    const fleet = await FleetFixture.create(label);
    fleets.push(fleet);
    return fleet;
  }

  /** A bare BullMQ worker that takes jobs by hand, as a worker process would before it dies. */
  function manualWorker(fleet: FleetFixture, lockDuration = 30_000): BullWorker {
    const connection = duplicateRedis(fleet.redis, { maxRetriesPerRequest: null });
    connections.push(connection);
    const worker = new BullWorker(fleet.config.queueName, undefined, { connection, autorun: false, lockDuration });
    manualWorkers.push(worker);
    return worker;
  }

  async function takeDrainJob(worker: BullWorker, token: string): Promise<Job> {
    const job = (await worker.getNextJob(token, { block: false })) as Job | undefined;
    if (job?.name !== JOB.drain) throw new Error(`expected the drain job, got ${job?.name ?? 'nothing'}`);
    return job;
  }

  it('R4: an input accepted in Postgres whose kick never happened (producer crash, Redis lost the write) is run', async () => {
    const fleet = await newFleet('sweep_r4');
    const sessionId = 'r4-lost-kick';
    await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'never kicked' }, maxBytes: 1 << 20 });
    expect(await fleet.queue.getJobCounts('waiting', 'active', 'delayed')).toEqual({ waiting: 0, active: 0, delayed: 0 });
    await fleet.startWorker({ settings: FAST_SWEEPER });
    const [input] = await fleet.waitForSessionIdle(sessionId, 1);
    expect(input).toMatchObject({ status: 'done', attempts: 1, result: { finalText: 'Echo: never kicked' } });
    const reports = await sweepReports(fleet.redis, fleet.config.queueName);
    expect(reports.some((report) => report.stranded >= 1 && report.kicked >= 1)).toBe(true);
  });

  it("a sweep iteration lost with its worker (the schedule names a job that will never run) does not stop the sweeper", async () => {
    const fleet = await newFleet('sweep_lost_iteration');
    const sessionId = 'lost-iteration';
    const { queueName } = fleet.config;
    await fleet.startWorker({ settings: FAST_SWEEPER });
    await fleet.waitFor('a first sweep', async () => ((await sweepReports(fleet.redis, queueName)).length > 0 ? true : undefined));
    // What a worker that died between taking an iteration and setting the next leaves behind: the
    // schedule names an iteration that no job will run. (Taken here by removing the pending one.)
    const scheduler = await fleet.queue.getJobScheduler(JOB.sweep);
    const iteration = `repeat:${JOB.sweep}:${scheduler!.next!}`;
    await fleet.redis.multi().zrem(`bull:${queueName}:delayed`, iteration).lrem(`bull:${queueName}:wait`, 0, iteration).del(`bull:${queueName}:${iteration}`).exec();
    await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'only a sweep runs me' }, maxBytes: 1 << 20 });
    const [input] = await fleet.waitForSessionIdle(sessionId, 1, 40_000);
    expect(input).toMatchObject({ status: 'done', result: { finalText: 'Echo: only a sweep runs me' } });
  });

  it('R3: an input whose drain job failed for good (attempts or stalls exhausted) is run', async () => {
    const fleet = await newFleet('sweep_r3');
    const sessionId = 'r3-failed-drain';
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'its drain failed' } });
    const manual = manualWorker(fleet);
    const job = await takeDrainJob(manual, 'doomed');
    await job.moveToFailed(new UnrecoverableError('job stalled more than allowable limit'), 'doomed');
    expect(await job.getState()).toBe('failed');
    // The failure released the deduplication key: no drain is left for the pending input.
    expect(await fleet.queue.getDeduplicationJobId(drainDedupId(sessionId))).toBeNull();
    expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'pending' });
    await fleet.startWorker({ settings: FAST_SWEEPER });
    const [input] = await fleet.waitForSessionIdle(sessionId, 1);
    expect(input).toMatchObject({ status: 'done', result: { finalText: 'Echo: its drain failed' } });
  });

  it('R9: a stray deduplication key naming a job that does not exist does not strand the session', async () => {
    const fleet = await newFleet('sweep_r9_missing');
    const sessionId = 'r9-missing-owner';
    await fleet.redis.set(`bull:${fleet.config.queueName}:de:${drainDedupId(sessionId)}`, 'no-such-job');
    await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'behind a stray key' }, maxBytes: 1 << 20 });
    await fleet.startWorker({ settings: FAST_SWEEPER });
    const [input] = await fleet.waitForSessionIdle(sessionId, 1);
    expect(input).toMatchObject({ status: 'done', result: { finalText: 'Echo: behind a stray key' } });
    const reports = await sweepReports(fleet.redis, fleet.config.queueName);
    expect(reports.reduce((sum, report) => sum + report.strayKeysRemoved, 0)).toBeGreaterThanOrEqual(1);
  });

  it('R9: a stray deduplication key naming a finished (failed, retained) drain swallows every kick; the sweeper removes it', async () => {
    const fleet = await newFleet('sweep_r9_failed');
    const sessionId = 'r9-finished-owner';
    const dedupKey = `bull:${fleet.config.queueName}:de:${drainDedupId(sessionId)}`;
    await kickSession({ queue: fleet.shards }, { sessionId, tenant: 'default' });
    const manual = manualWorker(fleet);
    const job = await takeDrainJob(manual, 'doomed');
    await job.moveToFailed(new UnrecoverableError('failed during a Redis outage'), 'doomed');
    // The outage left the key behind (bullmq#4311): it still names the failed job, which is retained.
    await fleet.redis.set(dedupKey, job.id!);
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'kick swallowed' } });
    const drains = (await fleet.queue.getJobs(['waiting', 'active', 'delayed', 'prioritized'])).filter((entry) => entry.name === JOB.drain);
    expect(drains).toEqual([]);
    expect(await fleet.redis.get(dedupKey)).toBe(job.id);
    await fleet.startWorker({ settings: FAST_SWEEPER });
    const [input] = await fleet.waitForSessionIdle(sessionId, 1);
    expect(input).toMatchObject({ status: 'done', result: { finalText: 'Echo: kick swallowed' } });
    const reports = await sweepReports(fleet.redis, fleet.config.queueName);
    expect(reports.reduce((sum, report) => sum + report.strayKeysRemoved, 0)).toBeGreaterThanOrEqual(1);
  });

  it('R2/kill -9: a drain job left active by a dead worker (its BullMQ lock still valid for minutes) does not hold the session', async () => {
    const fleet = await newFleet('sweep_dead_holder');
    const sessionId = 'dead-holder';
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'first' } });
    // The dead worker took the drain job and never finishes it; BullMQ would keep it active until its
    // lock lapses (10 minutes here) and a stalled check runs.
    const dead = manualWorker(fleet, 600_000);
    const job = await takeDrainJob(dead, 'dead-worker');
    // Kicks for later inputs are kept for when that job finishes — which it never does.
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'second' } });
    expect(await job.getState()).toBe('active');
    await fleet.startWorker({ settings: FAST_SWEEPER });
    const inputs = await fleet.waitForSessionIdle(sessionId, 2, 30_000);
    expect(inputs.map((input) => [input.status, input.result?.finalText])).toEqual([
      ['done', 'Echo: first'],
      ['done', 'Echo: second'],
    ]);
    expect(await job.getState()).toBe('active');
    const reports = await sweepReports(fleet.redis, fleet.config.queueName);
    expect(reports.reduce((sum, report) => sum + report.strayKeysRemoved, 0)).toBeGreaterThanOrEqual(1);
  });
});
