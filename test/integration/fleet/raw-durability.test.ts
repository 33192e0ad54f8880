import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { startTcpProxyTo, type TcpProxy } from '../../support/tcp-proxy.js';
import { PrivateRedis } from './fixtures/private-redis.js';
import { RawProducer } from './fixtures/raw-clients.js';

/**
 * A raw job is durable only once a worker ingested it (docs/client.md, "Until a worker ingested
 * it"; I1): before that it lives in Redis alone. These tests follow the recovery the documentation
 * gives a raw producer — wait for the job's result, add it again under the same id when it is gone —
 * and the bound on how long a job whose worker died mid-ingest waits for another worker.
 */
describe('raw path: a job lost with Redis before ingestion (private redis-server)', () => {
  let redis: PrivateRedis;
  let fleet: FleetFixture;
  let producer: RawProducer;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    fleet = await FleetFixture.create('raw_lost', { REDIS_URL: redis.url });
    producer = await RawProducer.open(redis.url, fleet.config.queueName);
  });

  afterAll(async () => {
    await producer?.close();
    await fleet?.close();
    await redis?.stop();
  });

  async function inboxRows(sessionId: string): Promise<{ seq: number; input_id: string }[]> {
    const result = await fleet.pool.query<{ seq: number; input_id: string }>('SELECT seq::int, input_id FROM session_inputs WHERE session_id = $1 ORDER BY seq', [sessionId]);
    return result.rows;
  }

  it('a FLUSHALL before any worker ran loses the job; the producer adds it again under its id and the input is accepted once, and once only when added again after', async () => {
    const sessionId = 'raw-lost';
    const data = { sessionId, input: 'kept' };
    await producer.add('send', data, { jobId: 'lost-1' });
    await redis.flushAll();
    expect(await inboxRows(sessionId)).toEqual([]);
    await fleet.startWorker();
    const recovered = await producer.ensureIngested('send', data, 'lost-1');
    expect(recovered).toEqual({ value: { seq: 1, inputId: 'bullmq:lost-1', duplicate: false }, readds: 1 });
    await fleet.waitForSessionIdle(sessionId, 1);
    // The job still kept by BullMQ: adding it again is a no-op, and its result is the same.
    expect(await producer.ensureIngested('send', data, 'lost-1')).toEqual({ value: { seq: 1, inputId: 'bullmq:lost-1', duplicate: false }, readds: 0 });
    // Redis lost again after the ingest (the producer cannot tell the two apart): the job added again
    // is ingested as a duplicate of the input already accepted.
    await redis.flushAll();
    expect(await producer.ensureIngested('send', data, 'lost-1')).toEqual({ value: { seq: 1, inputId: 'bullmq:lost-1', duplicate: true }, readds: 1 });
    expect(await inboxRows(sessionId)).toEqual([{ seq: 1, input_id: 'bullmq:lost-1' }]);
    expect(await fleet.transcript(sessionId)).toEqual(['user: kept', 'assistant: Echo: kept']);
  });
});

describe('raw path: a worker killed mid-ingest (processes)', () => {
  let fleet: FleetFixture;
  let proxy: TcpProxy;

  beforeAll(async () => {
    fleet = await FleetFixture.create('raw_kill_ingest');
    proxy = await startTcpProxyTo(fleet.db.url);
  });

  afterAll(async () => {
    await fleet?.close();
    await proxy?.close();
  });

  it('another worker ingests the job within 2 × WORKER_JOB_LOCK_MS of the kill (the stall check), not BullMQ’s minute', async () => {
    const sessionId = 'raw-killed';
    const doomed = await fleet.processes.start({ DATABASE_URL: proxy.via(fleet.db.url) });
    // The doomed worker's accept statement never reaches Postgres: it is held mid-ingest, job active.
    // By its name, or its text where it goes unnamed (DATABASE_POOLER=transaction: LOOPFLEET_TEST_PGBOUNCER=1).
    proxy.silenceWhen((chunk) => chunk.includes('loopfleet_accept_inputs') || chunk.includes('AS r(session_id text, input_id text, kind text'));
    await fleet.queue.add('send', { sessionId, input: 'taken over' }, { jobId: 'killed-1' });
    await fleet.waitFor('the accept held in the proxy', async () => (proxy.silenced() > 0 ? true : undefined));
    expect(await fleet.queue.getJobState('killed-1')).toBe('active');
    const heir = await fleet.processes.start();
    expect((await doomed.kill()).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    // The bound the documentation gives (docs/fleet.md, "The job lock"), plus a margin for a loaded
    // machine; BullMQ's stall check is the only way back for this job, so this is no speed test.
    const bound = 2 * fleet.config.worker.jobLockMs;
    const rows = await fleet.waitFor(
      'the input ingested by the other worker',
      async () => {
        const inputs = await fleet.store.listInputs(sessionId, { limit: 10 });
        return inputs.length > 0 ? inputs : undefined;
      },
      bound + 10_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${fleet.processes.diagnostics()}`);
    });
    expect(rows.map((input) => [input.seq, input.inputId])).toEqual([[1, 'bullmq:killed-1']]);
    expect(Date.now() - killedAt).toBeLessThan(bound + 10_000);
    await fleet.waitForSessionIdle(sessionId, 1);
    await fleet.waitFor('the job completed', async () => ((await fleet.queue.getJobState('killed-1')) === 'completed' ? true : undefined));
    const job = await fleet.queue.getJob('killed-1');
    expect(job?.returnvalue).toEqual({ seq: 1, inputId: 'bullmq:killed-1', duplicate: false });
    expect(heir.exit).toBeNull();
  }, 120_000);
});
