import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '../../support/test-database.js';

/**
 * What fair dispatch (docs/fair-dispatch.md) builds on, checked against the installed BullMQ rather
 * than its documentation: priorities together with `deduplication: { id, keepLastIfActive }`.
 *
 * - a job without priority is taken before any prioritized one; prioritized ones lowest first, FIFO
 *   within one priority;
 * - an add whose dedup key names a waiting (prioritized) job is absorbed: that job keeps its priority;
 * - an add while the job is active is stored (the last one wins, with its own options), and enqueued
 *   with that stored priority in the call that finishes the active job.
 */
describe('BullMQ priorities with deduplication and keepLastIfActive', () => {
  const name = uniqueName('prio-dedup');
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

  function kick(id: string, priority: number | undefined, tag = id) {
    return queue.add('drain', { id, tag }, Object.assign({ deduplication: { id: `drain:${id}`, keepLastIfActive: true }, removeOnComplete: true }, priority === undefined ? {} : { priority }));
  }

  it('orders by priority, FIFO within one, unprioritized first; a waiting job keeps its priority', async () => {
    await kick('a1', 5);
    await kick('a2', 3);
    await kick('b1', 1);
    await kick('a3', 3);
    await kick('plain', undefined);
    // Absorbed: a2 is waiting at priority 3 and stays there (not moved to 1).
    const absorbed = await kick('a2', 1, 'second kick');
    expect(await queue.getPrioritized()).toHaveLength(4);
    expect((await queue.getJob(absorbed.id!))?.priority).toBe(3);

    const order: string[] = [];
    const workerConnection = connection.duplicate();
    const worker = new Worker(name, async (job: Job) => void order.push(job.data.tag as string), { connection: workerConnection, concurrency: 1 });
    try {
      await waitUntil(() => order.length === 5);
    } finally {
      await worker.close();
      await workerConnection.quit();
    }
    expect(order).toEqual(['plain', 'b1', 'a2', 'a3', 'a1']);
  });

  it('a kick while active is stored with its own priority (last wins) and enqueued as prioritized when the active job finishes', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started: () => void = () => undefined;
    const activeNow = new Promise<void>((resolve) => (started = resolve));
    const seen: Array<[string, number]> = [];
    const workerConnection = connection.duplicate();
    const worker = new Worker(
      name,
      async (job: Job) => {
        seen.push([job.data.tag as string, job.priority]);
        if (job.data.tag === 'first') {
          started();
          await held;
        }
      },
      { connection: workerConnection, concurrency: 1 },
    );
    try {
      await kick('s', 7, 'first');
      await activeNow;
      await kick('s', 9, 'stored-9');
      await kick('s', 2, 'stored-2');
      // The stored kick is no job yet: nothing waits.
      expect(await queue.getPrioritized()).toHaveLength(0);
      release();
      await waitUntil(() => seen.length === 2);
      expect(seen).toEqual([
        ['first', 7],
        ['stored-2', 2],
      ]);
    } finally {
      await worker.close();
      await workerConnection.quit();
    }
  });
});

async function waitUntil(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
