import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rawIngestDelayMs, RAW_INGEST_MAX_STARTS } from '../../../src/worker/job-router.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { InstrumentedStore } from './fixtures/fleet-helpers.js';
import { RawProducer } from './fixtures/raw-clients.js';

/**
 * A raw `send` whose ingest fails for a reason that is not its data (Postgres unreachable for a
 * moment) is not in Postgres yet: failing the job would lose the input (I1), and a raw producer in
 * any language may leave BullMQ's default of one attempt. The worker delays the job and tries again.
 */
describe('raw path: a transient ingest failure', () => {
  let fleet: FleetFixture;
  let producer: RawProducer;
  let worker: RunningWorker;
  const store = new InstrumentedStore();

  beforeAll(async () => {
    fleet = await FleetFixture.create('raw_transient');
    worker = await fleet.startWorker({ wrapStore: store.wrap, healthServer: true });
    producer = await RawProducer.open(fleet.config.redisUrl, fleet.config.queueName);
  });

  afterAll(async () => {
    await producer?.close();
    await fleet?.close();
  });

  it('is tried again, not failed, when the producer set no attempts: the input is ingested once and runs', async () => {
    store.failNext('acceptInput', () => new Error('Connection terminated unexpectedly'));
    const outcome = await producer.run('send', { sessionId: 'raw-transient', input: 'hello' }, { jobId: 'transient-1' });
    expect(outcome.state).toBe('completed');
    expect(outcome.value).toMatchObject({ seq: 1, inputId: 'bullmq:transient-1', duplicate: false });
    expect(outcome.job.attemptsStarted).toBe(2);
    expect(store.calls.get('acceptInput')).toHaveLength(2);
    await vi.waitFor(async () => expect(await fleet.store.getInput('raw-transient', 1)).toMatchObject({ status: 'done' }), { timeout: 20_000, interval: 20 });
    expect((await fleet.store.getInput('raw-transient', 1))?.result).toMatchObject({ finalText: 'Echo: hello' });
    expect(await fleet.pool.query('SELECT count(*)::int AS n FROM session_inputs').then((r) => r.rows[0].n)).toBe(1);
    // In /metrics: a retry (Postgres failing), then the ingest; never the `delayed` of a busy lease.
    const metrics = await (await fetch(`http://127.0.0.1:${String(worker.healthPort)}/metrics`)).text();
    const jobs = metrics.split('\n').filter((line) => line.startsWith('loopfleet_jobs_total{') && line.includes('kind="send"'));
    expect(jobs.map((line) => line.replace(/,?queue="[^"]*"/, '').replace('{,', '{'))).toEqual(['loopfleet_jobs_total{kind="send",outcome="retry"} 1', 'loopfleet_jobs_total{kind="send",outcome="ok"} 1']);
  });

  it('a job whose data is bad still fails at once, without a retry', async () => {
    const outcome = await producer.run('send', { sessionId: 'raw-transient-bad' }, { jobId: 'transient-bad' });
    expect(outcome.state).toBe('failed');
    expect(outcome.failedReason).toContain('input.invalid');
    expect(outcome.job.attemptsStarted).toBe(1);
  });

  it('waits 1 s, doubling to a minute, over a bounded number of starts', () => {
    expect([1, 2, 3, 6, 7, 20].map(rawIngestDelayMs)).toEqual([1_000, 2_000, 4_000, 32_000, 60_000, 60_000]);
    expect(RAW_INGEST_MAX_STARTS).toBe(20);
  });
});
