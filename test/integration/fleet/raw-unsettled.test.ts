import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { RawProducer } from './fixtures/raw-clients.js';

/**
 * S5 (docs/invariants.md): a malformed raw job settles once, with a typed code. Producers in other
 * languages write BullMQ's Redis layout themselves, so a job may reach the workers in a shape BullMQ's
 * own client never writes: data that is not JSON, or a custom job id that does not survive the trip
 * through Redis as text. A job whose data is not JSON fails once with `input.invalid: …`, nothing is
 * written to the inbox, and the queue keeps flowing; a job id with U+0000 is ingested once.
 */
describe('raw jobs that never settled', () => {
  let fleet: FleetFixture;
  let producer: RawProducer;

  beforeAll(async () => {
    fleet = await FleetFixture.create('raw_unsettled');
    await fleet.startWorker();
    producer = await RawProducer.open(fleet.config.redisUrl, fleet.config.queueName);
  });

  afterAll(async () => {
    await producer?.close();
    await fleet?.close();
  });

  const key = (name: string) => `bull:${fleet.config.queueName}:${name}`;

  async function rowCounts(): Promise<{ sessions: number; inputs: number }> {
    const result = await fleet.pool.query<{ sessions: string; inputs: string }>(
      'SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM session_inputs) AS inputs',
    );
    return { sessions: Number(result.rows[0]!.sessions), inputs: Number(result.rows[0]!.inputs) };
  }

  /**
   * Adds a `send` job whose data is `rawData` as it stands, the way BullMQ's `addStandardJob` script
   * stores a job (a producer in another language does the same): the next number of the queue's
   * counter, the job hash, the `added` event, the id pushed on the wait list, the marker that wakes
   * the workers, the `waiting` event.
   */
  async function addRawJob(rawData: string): Promise<string> {
    const jobId = String(await fleet.redis.incr(key('id')));
    await fleet.redis
      .multi()
      .hset(key(jobId), 'name', 'send', 'data', rawData, 'opts', '{}', 'timestamp', String(Date.now()), 'delay', '0', 'priority', '0')
      .xadd(key('events'), '*', 'event', 'added', 'jobId', jobId, 'name', 'send')
      .lpush(key('wait'), jobId)
      .zadd(key('marker'), 0, '0')
      .xadd(key('events'), 'MAXLEN', '~', '10000', '*', 'event', 'waiting', 'jobId', jobId)
      .exec();
    return jobId;
  }

  /** The queue's jobs by state, counted from its lists and sets (no job id needed). */
  async function jobCounts(): Promise<{ wait: number; active: number; failed: number }> {
    const [wait, active, failed] = await Promise.all([fleet.redis.llen(key('wait')), fleet.redis.llen(key('active')), fleet.redis.zcard(key('failed'))]);
    return { wait, active, failed };
  }

  async function goodJobCompletes(label: string): Promise<void> {
    const next = await producer.run('send', { sessionId: 'after-unsettled', input: `after ${label}` });
    expect(next.state).toBe('completed');
  }

  it('a job whose data is not JSON fails once with input.invalid, writes nothing, and the next job completes', async () => {
    const before = await rowCounts();
    const failedBefore = (await jobCounts()).failed;
    const jobId = await addRawJob('{"sessionId": "raw-not-json", "input": "x"');
    const failedReason = await fleet.waitFor('the malformed job to fail', async () => {
      const reason = await fleet.redis.hget(key(jobId), 'failedReason');
      return reason ?? undefined;
    });
    expect(failedReason).toBe('input.invalid: job data is not JSON (42 characters)');
    expect(await fleet.redis.zscore(key('failed'), jobId)).not.toBeNull();
    expect(await fleet.redis.hget(key(jobId), 'ats')).toBe('1');
    expect(await fleet.redis.hget(key(jobId), 'stacktrace')).toContain('UnrecoverableError');
    expect(await jobCounts()).toMatchObject({ wait: 0, active: 0, failed: failedBefore + 1 });
    expect(await rowCounts()).toEqual(before);
    await goodJobCompletes('data that is not JSON');
  });

  it('a job whose custom id holds U+0000 is ingested once under a hashed input id and completes once; the next job completes', async () => {
    const jobId = 'nul\u0000id';
    const outcome = await producer.run('send', { sessionId: 'raw-nul-job-id', input: 'x' }, { jobId });
    expect(outcome.state).toBe('completed');
    expect(outcome.value).toMatchObject({ seq: 1, duplicate: false, inputId: expect.stringMatching(/^bullmq-sha256:[0-9a-f]{64}$/) });
    expect((await fleet.store.listInputs('raw-nul-job-id', { limit: 10 })).map((input) => input.seq)).toEqual([1]);
    await goodJobCompletes('a job id with U+0000');
  });
});
