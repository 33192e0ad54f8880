import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { RawProducer } from './fixtures/raw-clients.js';

/**
 * S5 (docs/invariants.md): a malformed raw job settles once, with a typed code. Producers in other
 * languages write BullMQ's Redis layout themselves, so a job may reach the workers in a shape BullMQ's
 * own client never writes: data that is not JSON, or a custom job id that does not survive the trip
 * through Redis as text. A job whose data is not JSON fails once with `input.invalid: …`, nothing is
 * written to the inbox, and the queue keeps flowing; a job id with U+0000 is ingested once. A custom
 * id with half a surrogate pair, which BullMQ's Node client stores in bytes that are not UTF-8, fails
 * once with `job.invalid_id: …` under the id as the worker reads it, and nothing is written.
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

  /** Waits until job `jobId` failed, checks it failed at its first start without retry, and returns its failed reason. */
  async function failedOnce(jobId: string): Promise<string> {
    const failedReason = await fleet.waitFor(`job ${JSON.stringify(jobId)} to fail`, async () => {
      const reason = await fleet.redis.hget(key(jobId), 'failedReason');
      return reason ?? undefined;
    });
    expect(await fleet.redis.zscore(key('failed'), jobId)).not.toBeNull();
    expect(await fleet.redis.hget(key(jobId), 'ats')).toBe('1');
    expect(await fleet.redis.hget(key(jobId), 'stacktrace')).toContain('UnrecoverableError');
    return failedReason;
  }

  /** Adds a `send` job with custom id `jobId` and checks its input was ingested once, under a hashed input id. */
  async function ingestedOnceUnderHash(sessionId: string, jobId: string): Promise<void> {
    const outcome = await producer.run('send', { sessionId, input: 'x' }, { jobId });
    expect(outcome.state).toBe('completed');
    expect(outcome.value).toMatchObject({ seq: 1, duplicate: false, inputId: expect.stringMatching(/^bullmq-sha256:[0-9a-f]{64}$/) });
    expect((await fleet.store.listInputs(sessionId, { limit: 10 })).map((input) => input.seq)).toEqual([1]);
  }

  async function goodJobCompletes(label: string): Promise<void> {
    const next = await producer.run('send', { sessionId: 'after-unsettled', input: `after ${label}` });
    expect(next.state).toBe('completed');
  }

  it('a job whose data is not JSON fails once with input.invalid, writes nothing, and the next job completes', async () => {
    const before = await rowCounts();
    const failedBefore = (await jobCounts()).failed;
    const jobId = await addRawJob('{"sessionId": "raw-not-json", "input": "x"');
    expect(await failedOnce(jobId)).toBe('input.invalid: job data is not JSON (42 characters)');
    expect(await jobCounts()).toMatchObject({ wait: 0, active: 0, failed: failedBefore + 1 });
    expect(await rowCounts()).toEqual(before);
    await goodJobCompletes('data that is not JSON');
  });

  it('a job whose custom id holds U+0000 is ingested once under a hashed input id and completes once; the next job completes', async () => {
    await ingestedOnceUnderHash('raw-nul-job-id', 'nul\u0000id');
    await goodJobCompletes('a job id with U+0000');
  });

  it('a job whose custom id holds half a surrogate pair fails once with job.invalid_id under its readable id, writes nothing; the next job completes', async () => {
    const before = await rowCounts();
    const failedBefore = (await jobCounts()).failed;
    // BullMQ's Node client packs a short id with msgpackr, which writes the lone surrogate as ED A0 BD:
    // the stored key is not UTF-8, and the worker reads the id back with U+FFFD in place of each byte.
    await producer.add('send', { sessionId: 'raw-half-surrogate', input: 'x' }, { jobId: 'half\ud83d' });
    const storedId = Buffer.concat([Buffer.from('half'), Buffer.from([0xed, 0xa0, 0xbd])]);
    const readableId = storedId.toString('utf8');
    expect(readableId).toBe('half\ufffd\ufffd\ufffd');
    expect(await failedOnce(readableId)).toBe('job.invalid_id: the job id is not valid UTF-8 text (7 bytes)');
    const storedKey = Buffer.concat([Buffer.from(key('')), storedId]);
    expect(await fleet.redis.exists(storedKey, Buffer.concat([storedKey, Buffer.from(':lock')]))).toBe(0);
    expect(await fleet.redis.exists(`${key(readableId)}:lock`)).toBe(0);
    expect((await jobCounts()).failed).toBe(failedBefore + 1);
    // Other jobs (the previous test's drain, the sweeper) may be active: this one is in no list but failed.
    const jobLists = [...(await fleet.redis.lrangeBuffer(key('wait'), 0, -1)), ...(await fleet.redis.lrangeBuffer(key('active'), 0, -1))];
    expect(jobLists.filter((entry) => entry.equals(storedId) || entry.toString('utf8') === readableId)).toEqual([]);
    expect(await fleet.redis.sismember(key('stalled'), readableId)).toBe(0);
    expect(await rowCounts()).toEqual(before);
    await goodJobCompletes('a job id with half a surrogate pair');
  });

  it('a job whose custom id holds U+FFFD itself is ingested once and completes; the next job completes', async () => {
    await ingestedOnceUnderHash('raw-replacement-char-job-id', 'genuine\ufffdid');
    await goodJobCompletes('a job id with U+FFFD');
  });
});
