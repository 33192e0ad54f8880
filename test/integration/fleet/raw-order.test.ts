import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawOrderKey } from '../../../src/fleet/fleet-keys.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { InstrumentedStore } from './fixtures/fleet-helpers.js';
import { RawProducer } from './fixtures/raw-clients.js';

/**
 * The raw path keeps add order per session (docs/client.md, "Ordering guarantee"): a producer in any
 * language that adds a session's `send` jobs one after another gets them run in that order, though
 * many worker slots ingest raw jobs at once (src/worker/raw-ingest-order.ts).
 */
describe('raw path: add order per session', () => {
  let fleet: FleetFixture;
  let producer: RawProducer;
  const store = new InstrumentedStore();

  beforeAll(async () => {
    fleet = await FleetFixture.create('raw_order', { WORKER_CONCURRENCY: '8' });
    producer = await RawProducer.open(fleet.config.redisUrl, fleet.config.queueName);
  });

  afterAll(async () => {
    await producer?.close();
    await fleet?.close();
  });

  /** The inputs' texts of a session, in seq order. */
  async function textsBySeq(sessionId: string): Promise<string[]> {
    const inputs = await fleet.store.listInputs(sessionId, { limit: 1000 });
    return [...inputs].sort((a, b) => a.seq - b.seq).map((input) => String(input.payload.input));
  }

  it('100 jobs over 5 sessions, added in a tight loop before any worker runs, run in add order with three workers starting at once', async () => {
    const sessions = Array.from({ length: 5 }, (_, i) => `order-${i}`);
    const added: Array<{ sessionId: string; input: string; jobId: string }> = [];
    for (let i = 0; i < 100; i += 1) {
      const sessionId = sessions[i % sessions.length]!;
      const input = `message ${i}`;
      const job = await producer.add('send', { sessionId, input });
      added.push({ sessionId, input, jobId: job.id! });
    }
    // Three workers of 8 slots each start together: 24 slots take the waiting jobs at once.
    const workers: RunningWorker[] = await Promise.all([0, 1, 2].map(() => fleet.startWorker({ wrapStore: store.wrap })));
    for (const sessionId of sessions) await fleet.waitForSessionIdle(sessionId, 20, 60_000);
    for (const sessionId of sessions) {
      expect(await textsBySeq(sessionId)).toEqual(added.filter((a) => a.sessionId === sessionId).map((a) => a.input));
    }
    // Ingested exactly once, and each job's result carries the seq of its place.
    expect(await fleet.pool.query('SELECT count(*)::int AS n FROM session_inputs').then((r) => r.rows[0].n)).toBe(100);
    for (const sessionId of sessions) {
      const jobs = added.filter((a) => a.sessionId === sessionId);
      const seqs = await Promise.all(jobs.map(async (a) => ((await producer.job(a.jobId))?.returnvalue as { seq: number }).seq));
      expect(seqs).toEqual(jobs.map((_, index) => index + 1));
      // Nothing left in the session's order set.
      expect(await fleet.redis.zcard(rawOrderKey(fleet.config.queueName, sessionId))).toBe(0);
    }
    await Promise.all(workers.slice(1).map((worker) => worker.close()));
  });

  it('a job whose ingest failed and waits for its retry keeps its place: the jobs after it wait', async () => {
    store.failNext('acceptInput', () => new Error('Connection terminated unexpectedly'), { when: (args) => JSON.stringify(args).includes('first, retried') });
    const sessionId = 'order-retry';
    const first = await producer.add('send', { sessionId, input: 'first, retried' });
    // The first job's ingest fails, and it waits a second for its retry.
    await fleet.waitFor('the first job delayed for its retry', async () => ((await producer.job(first.id!))?.attemptsStarted === 1 && (await producer.state(first.id!)) === 'delayed' ? true : undefined));
    const second = await producer.add('send', { sessionId, input: 'second' });
    const third = await producer.add('send', { sessionId, input: 'third' });
    await fleet.waitForSessionIdle(sessionId, 3, 30_000);
    expect(await textsBySeq(sessionId)).toEqual(['first, retried', 'second', 'third']);
    // The later jobs were put back while the first waited; that does not count as a failed start.
    expect(await producer.state(second.id!)).toBe('completed');
    expect(await producer.state(third.id!)).toBe('completed');
  });

  it('an entry whose job is gone (a worker died, the job was removed) does not hold the session back', async () => {
    const sessionId = 'order-ghost';
    await fleet.redis.zadd(rawOrderKey(fleet.config.queueName, sessionId), 0, 'ghost-job');
    const outcome = await producer.run('send', { sessionId, input: 'after a ghost' });
    expect(outcome.value).toMatchObject({ seq: 1, duplicate: false });
    expect(await fleet.redis.zcard(rawOrderKey(fleet.config.queueName, sessionId))).toBe(0);
  });

  it('a rejected job leaves its place at once: the next job of its session runs', async () => {
    const sessionId = 'order-rejected';
    const bad = await producer.add('send', { sessionId });
    const good = await producer.run('send', { sessionId, input: 'after a rejected job' });
    expect(good.value).toMatchObject({ seq: 1 });
    expect(await producer.state(bad.id!)).toBe('failed');
  });
});
