import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, inject } from 'vitest';
import { reidentifyJob } from '../../../src/worker/unreadable-job-id.js';

/**
 * `reidentifyJob` on jobs that BullMQ's own client added and BullMQ's own worker took (manual
 * fetch, lock token of the test's choosing): a custom id with half a surrogate pair is stored as the
 * bytes `ED A0 BD`, read back with U+FFFD, and moved under the id as read with its lock, logs, stalled
 * mark and deduplication key, after which BullMQ's `moveToFailed` works (S5).
 */
describe('a job stored under an id that is not UTF-8', () => {
  const queueName = `unreadable_id_${randomUUID().slice(0, 8)}`;
  const prefix = `bull:${queueName}:`;
  let redis: Redis;
  let queue: Queue;
  let worker: Worker;

  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    queue = new Queue(queueName, { connection: redis });
    worker = new Worker(queueName, null, { connection: { ...redisOptions(inject('redisUrl')) }, autorun: false });
  });

  afterEach(async () => {
    await queue.obliterate({ force: true });
  });

  afterAll(async () => {
    await worker?.close();
    await queue?.close();
    await redis?.quit();
  });

  const stored = (id: Buffer, suffix = '') => Buffer.concat([Buffer.from(prefix), id, Buffer.from(suffix)]);
  const storedHalf = Buffer.concat([Buffer.from('half'), Buffer.from([0xed, 0xa0, 0xbd])]);
  const readHalf = 'half\ufffd\ufffd\ufffd';

  /** Adds `id` and takes it as the worker would, under lock `token`. */
  async function takeJob(id: string, token: string, deduplicationId?: string): Promise<Job> {
    await queue.add('send', { sessionId: 's', input: 'x' }, { jobId: id, ...(deduplicationId ? { deduplication: { id: deduplicationId } } : {}) });
    const job = await worker.getNextJob(token);
    if (job === undefined) throw new Error('no job taken');
    return job;
  }

  it('moves the job, its lock, logs, stalled mark and deduplication key under the id as read; BullMQ then fails it', async () => {
    const job = await takeJob('half\ud83d', 'token-1', 'dedup-1');
    expect(job.id).toBe(readHalf);
    expect(await redis.getBuffer(`${prefix}de:dedup-1`)).toEqual(storedHalf);
    await redis.rpush(stored(storedHalf, ':logs'), 'a log line');
    await redis.sadd(`${prefix}stalled`, storedHalf);

    expect(await reidentifyJob(redis, { id: job.id, queueQualifiedName: job.queueQualifiedName, token: 'token-1' })).toEqual({ bytes: 7, moved: true });

    expect(await redis.exists(stored(storedHalf), stored(storedHalf, ':lock'), stored(storedHalf, ':logs'))).toBe(0);
    expect(await redis.hget(`${prefix}${readHalf}`, 'name')).toBe('send');
    expect(await redis.get(`${prefix}${readHalf}:lock`)).toBe('token-1');
    expect(await redis.lrange(`${prefix}${readHalf}:logs`, 0, -1)).toEqual(['a log line']);
    expect(await redis.lrange(`${prefix}active`, 0, -1)).toEqual([readHalf]);
    expect(await redis.smembers(`${prefix}stalled`)).toEqual([readHalf]);
    expect(await redis.get(`${prefix}de:dedup-1`)).toBe(readHalf);

    await job.moveToFailed(new Error('refused'), 'token-1');
    expect(await queue.getJobState(readHalf)).toBe('failed');
    expect(await redis.llen(`${prefix}active`)).toBe(0);
    expect(await redis.exists(`${prefix}de:dedup-1`)).toBe(0);
  });

  it('leaves a job whose lock is not this token, and one whose id as read is already another job’s', async () => {
    const job = await takeJob('half\ud83d', 'token-2');
    expect(await reidentifyJob(redis, { id: job.id, queueQualifiedName: job.queueQualifiedName, token: 'another-token' })).toBeNull();
    await redis.hset(`${prefix}${readHalf}`, 'name', 'another job');
    expect(await reidentifyJob(redis, { id: job.id, queueQualifiedName: job.queueQualifiedName, token: 'token-2' })).toEqual({ bytes: 7, moved: false });
    expect(await redis.get(stored(storedHalf, ':lock'))).toBe('token-2');
    expect(await redis.lrangeBuffer(`${prefix}active`, 0, -1)).toEqual([storedHalf]);
    expect(await redis.hget(`${prefix}${readHalf}`, 'name')).toBe('another job');
  });

  it('takes an id that holds U+FFFD itself, and any other id, as it is', async () => {
    for (const [id, token] of [['genuine\ufffdid', 'token-3'], ['plain-id', 'token-4']] as const) {
      const job = await takeJob(id, token);
      expect(job.id).toBe(id);
      expect(await reidentifyJob(redis, { id: job.id, queueQualifiedName: job.queueQualifiedName, token })).toBeNull();
      expect(await redis.get(`${prefix}${id}:lock`)).toBe(token);
    }
  });
});

function redisOptions(url: string): { host: string; port: number; maxRetriesPerRequest: null } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 6379), maxRetriesPerRequest: null };
}
