import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { RawProducer, rawFollowUntil } from './fixtures/raw-clients.js';

/**
 * The raw path (docs/fleet.md; touch points 1 and 2): a plain BullMQ producer and a plain Redis
 * XREAD subscriber (fixtures/raw-clients.ts: bullmq and ioredis only) drive a session end to end; and
 * malformed jobs fail at once with a typed code, never retried, never half-written, while the queue
 * keeps flowing (I8).
 */
describe('the raw BullMQ path', () => {
  let fleet: FleetFixture;
  let producer: RawProducer;

  beforeAll(async () => {
    fleet = await FleetFixture.create('raw_path', { LOOPFLEET_MAX_INPUT_BYTES: '2048' });
    await fleet.startWorker();
    producer = await RawProducer.open(fleet.config.redisUrl, fleet.config.queueName);
  });

  afterAll(async () => {
    await producer?.close();
    await fleet?.close();
  });

  async function rowCounts(): Promise<{ sessions: number; inputs: number }> {
    const result = await fleet.pool.query<{ sessions: string; inputs: string }>(
      'SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM session_inputs) AS inputs',
    );
    return { sessions: Number(result.rows[0]!.sessions), inputs: Number(result.rows[0]!.inputs) };
  }

  it('a plain BullMQ send and a plain XREAD BLOCK subscriber run a session end to end; the job returns { seq, inputId }', async () => {
    const sessionId = 'raw-e2e';
    const followed = rawFollowUntil(fleet.config.redisUrl, fleet.config.queueName, sessionId, '0', (event) => event.type === 'input_finished');
    const outcome = await producer.run('send', { sessionId, input: 'hi' });
    expect(outcome.state).toBe('completed');
    expect(outcome.value).toMatchObject({ seq: 1, inputId: `bullmq:${outcome.job.id}@${outcome.job.timestamp}` });
    const events = await followed;
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('input_accepted');
    expect(types).toContain('input_started');
    expect(events.at(-1)!.data).toMatchObject({ sessionId, inputSeq: 1, status: 'completed', finalText: 'Echo: hi' });
    // Totally ordered, each id a cursor: resuming after any entry replays exactly the rest.
    const middle = events[Math.floor(events.length / 2)]!;
    const resumed = await rawFollowUntil(fleet.config.redisUrl, fleet.config.queueName, sessionId, middle.id, (event) => event.type === 'input_finished');
    expect(resumed.map((event) => event.id)).toEqual(events.slice(events.indexOf(middle) + 1).map((event) => event.id));
    expect(events.map((event) => event.data.seq)).toEqual(events.map((_, index) => index + 1));
  });

  it("a job numbered again after BullMQ's counter restarted (a Redis flush) is a new input, not the old job's redelivery", async () => {
    const sessionId = 'raw-counter-reset';
    const first = await producer.run('send', { sessionId, input: 'first' });
    expect(first.value).toMatchObject({ seq: 1, duplicate: false });
    // What a flush does to the counter (the rest of the queue is left alone here): the next job
    // BullMQ numbers takes the first one's id.
    await producer.remove(first.job.id!);
    await fleet.redis.set(`bull:${fleet.config.queueName}:id`, String(Number(first.job.id) - 1));
    const second = await producer.run('send', { sessionId, input: 'second' });
    expect(second.job.id).toBe(first.job.id);
    expect(second.value).toMatchObject({ seq: 2, duplicate: false, inputId: `bullmq:${second.job.id}@${second.job.timestamp}` });
    await fleet.waitForSessionIdle(sessionId, 2);
    expect(await fleet.transcript(sessionId)).toEqual(['user: first', 'assistant: Echo: first', 'user: second', 'assistant: Echo: second']);
  });

  it('a redelivered raw job (same job id) is ingested once; raw inputs are ordered by ingestion', async () => {
    const sessionId = 'raw-redelivery';
    const first = await producer.run('send', { sessionId, input: 'once' }, { jobId: 'order-42' });
    expect(first.value).toMatchObject({ seq: 1, inputId: 'bullmq:order-42', duplicate: false });
    await producer.remove('order-42');
    const again = await producer.run('send', { sessionId, input: 'once' }, { jobId: 'order-42' });
    expect(again.value).toMatchObject({ seq: 1, inputId: 'bullmq:order-42', duplicate: true });
    const second = await producer.run('send', { sessionId, input: 'then this', inputId: 'client-chosen-id' });
    expect(second.value).toMatchObject({ seq: 2, inputId: 'client-chosen-id' });
    await fleet.waitForSessionIdle(sessionId, 2);
    expect(await fleet.transcript(sessionId)).toEqual(['user: once', 'assistant: Echo: once', 'user: then this', 'assistant: Echo: then this']);
  });

  it('job ids the input-id alphabet cannot hold get input ids of their own; a job id past 512 characters is recorded by its hash', async () => {
    const sessionId = 'raw-long-ids';
    // Over 190 characters and alike in their first 90 bytes: until session 13 both became one input id.
    const first = await producer.run('send', { sessionId, input: 'first' }, { jobId: `${'x'.repeat(200)} A` });
    const second = await producer.run('send', { sessionId, input: 'second' }, { jobId: `${'x'.repeat(200)} B` });
    expect(first.value).toMatchObject({ seq: 1, duplicate: false, inputId: expect.stringMatching(/^bullmq-sha256:[0-9a-f]{64}$/) });
    expect(second.value).toMatchObject({ seq: 2, duplicate: false });
    expect((second.value as { inputId: string }).inputId).not.toBe((first.value as { inputId: string }).inputId);
    const longId = 'y'.repeat(600);
    const third = await producer.run('send', { sessionId, input: 'third', inputId: 'explicit-3' }, { jobId: longId });
    expect(third.value).toMatchObject({ seq: 3, inputId: 'explicit-3' });
    await fleet.waitForSessionIdle(sessionId, 3);
    const origins = await fleet.pool.query<{ origin: string }>('SELECT origin_job_id AS origin FROM session_inputs WHERE session_id = $1 ORDER BY seq', [sessionId]);
    expect(origins.rows.map((row) => row.origin)).toEqual([`${'x'.repeat(200)} A`, `${'x'.repeat(200)} B`, `sha256:${createHash('sha256').update(longId).digest('hex')}`]);
  });

  it.each([
    ['send without sessionId', 'session.invalid_id', 'send', { input: 'x' }],
    ['send with an invalid sessionId', 'session.invalid_id', 'send', { sessionId: 'not valid!', input: 'x' }],
    ["send for a new session whose stream would be another session's key", 'session.invalid_id', 'send', { sessionId: 'other:seq', input: 'x' }],
    ['send whose input is a number', 'input.invalid', 'send', { sessionId: 'bad-input', input: 42 }],
    ['send whose input is a message of the wrong role', 'input.invalid', 'send', { sessionId: 'bad-message', input: { role: 'assistant', content: 'x' } }],
    ['send without input', 'input.invalid', 'send', { sessionId: 'no-input' }],
    ['send with an oversized input', 'input.too_large', 'send', { sessionId: 'too-big', input: 'x'.repeat(5_000) }],
    ['send whose input holds half a surrogate pair', 'input.invalid', 'send', { sessionId: 'lone-surrogate', input: 'cut \ud83d' }],
    ['send with unknown extra fields', 'input.invalid', 'send', { sessionId: 'extra-fields', input: 'x', priority: 'high' }],
    ['send whose data is not an object', 'input.invalid', 'send', 'just a string'],
    ['resume combining submit and abortPending', 'input.invalid', 'resume', { sessionId: 'bad-resume', submit: { interactionId: 'a', value: 1 }, abortPending: { reason: 'r' } }],
    ['an unknown job name', 'job.unknown', 'launch', { sessionId: 'unknown-name', input: 'x' }],
    ['a drain with an invalid sessionId', 'session.invalid_id', 'drain', { sessionId: '../etc' }],
  ] as const)('%s fails at once with an UnrecoverableError "%s: …", no retry, nothing written; the next job completes', async (label, code, name, data) => {
    const before = await rowCounts();
    const outcome = await producer.run(name, data, { attempts: 5, backoff: { type: 'fixed', delay: 50 } });
    expect(outcome.state).toBe('failed');
    expect(outcome.failedReason).toMatch(new RegExp(`^${code.replace('.', '\\.')}: `));
    expect(outcome.job.attemptsMade).toBe(1);
    expect((outcome.job.stacktrace ?? []).join('\n')).toContain('UnrecoverableError');
    expect(await rowCounts()).toEqual(before);
    // The queue keeps flowing.
    const next = await producer.run('send', { sessionId: 'after-bad-jobs', input: `after ${label}` });
    expect(next.state).toBe('completed');
    expect(next.value).toMatchObject({ seq: expect.any(Number), inputId: expect.any(String) });
  });

  it('a timer job from a raw producer is an alarm: without its data it fails at once; an alarm with no armed timer writes nothing', async () => {
    const outcome = await producer.run('timer', { sessionId: 'timer-job' });
    expect(outcome.state).toBe('failed');
    expect(outcome.failedReason).toMatch(/^input\.invalid: invalid timer job data: timerId/);
    const before = await rowCounts();
    const stale = await producer.run('timer', { sessionId: 'timer-job', timerId: 'no-such-timer', fireCount: 0 });
    expect(stale).toMatchObject({ state: 'completed', value: { outcome: 'stale', timerId: 'no-such-timer' } });
    expect(await rowCounts()).toEqual(before);
  });

  it('a job of a name the workers do not handle is refused, naming the jobs they do', async () => {
    const outcome = await producer.run('tick', { sessionId: 'tick-job' });
    expect(outcome.state).toBe('failed');
    expect(outcome.failedReason).toBe('job.unknown: unknown job name "tick" (expected drain, send, resume, timer, sweep)');
  });
});
