import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BULLMQ_WORKER_DEFAULTS } from '../../../src/worker/worker-settings.js';
import { uniqueName } from '../../support/test-database.js';

/**
 * Raw-path jobs set no retention of their own, and BullMQ keeps such jobs forever unless the worker
 * gives a default: the worker's options (as startWorker passes them) bound the completed set.
 */
describe('retention of jobs that set none', () => {
  const name = uniqueName('retention');
  let connection: Redis;
  let queue: Queue;

  beforeAll(() => {
    connection = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    queue = new Queue(name, { connection });
  });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    await connection.quit();
  });

  it('keeps at most removeOnComplete.count completed jobs', async () => {
    const kept = BULLMQ_WORKER_DEFAULTS.removeOnComplete.count;
    const total = kept + 50;
    let completed = 0;
    let done: () => void = () => undefined;
    const allDone = new Promise<void>((resolve) => (done = resolve));
    const workerConnection = connection.duplicate();
    const worker = new Worker(name, async () => 'ok', { connection: workerConnection, concurrency: 64, ...BULLMQ_WORKER_DEFAULTS });
    worker.on('completed', () => {
      completed += 1;
      if (completed === total) done();
    });
    try {
      await queue.addBulk(Array.from({ length: total }, (_, i) => ({ name: 'send', data: { i } })));
      await allDone;
    } finally {
      await worker.close();
      await workerConnection.quit();
    }
    expect(await connection.zcard(`bull:${name}:completed`)).toBe(kept);
  });
});
