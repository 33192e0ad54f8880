import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, SessionQueue } from '../../../src/index.js';
import type { StreamItem } from '../../../src/fleet/fleet-events.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/** The items up to and including the input's `input_finished`. */
async function untilFinished(items: AsyncIterable<StreamItem>, seq: number): Promise<StreamItem[]> {
  const all: StreamItem[] = [];
  for await (const item of items) {
    all.push(item);
    if (item.kind === 'event' && item.type === 'input_finished' && item.data.inputSeq === seq) break;
  }
  return all;
}

/**
 * `new SessionQueue({ pool })`: the caller's own pool. The store needs its parsers (`bigint` as
 * numbers); a plain `pg.Pool` returned bigint columns as strings, so `add` failed after the input was
 * stored, and every read failed as `state.corrupt`. Such a pool is refused at construction; one from
 * `createPgPool` works, and `close()` leaves it open.
 */
describe('SessionQueue on the caller’s own pool', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('own_pool');
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('refuses a plain pg.Pool with config.invalid, before anything is written', async () => {
    const plain = new pg.Pool({ connectionString: fleet.config.databaseUrl });
    try {
      expect(() => new SessionQueue({ pool: plain, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName })).toThrow(
        expect.objectContaining({ code: 'config.invalid', message: expect.stringContaining('createPgPool') }),
      );
      expect((await fleet.pool.query('SELECT count(*)::int AS n FROM session_inputs')).rows[0].n).toBe(0);
    } finally {
      await plain.end();
    }
  });

  it('works on a pool from createPgPool: add, result, history and stats; close() leaves the pool open', async () => {
    const pool = createPgPool(fleet.config.databaseUrl, { maxConnections: 2 });
    const queue = new SessionQueue({ pool, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    try {
      const handle = await queue.add('send', { sessionId: 'own-pool', input: 'hi' });
      expect(handle.seq).toBe(1);
      expect(await handle.result({ timeoutMs: 20_000 })).toMatchObject({ status: 'completed', finalText: 'Echo: hi' });
      expect((await queue.history('own-pool')).map((row) => row.message.content)).toEqual(['hi', 'Echo: hi']);
      expect(await queue.stats('own-pool')).toMatchObject({ inputs: { done: 1 } });
    } finally {
      await queue.close();
    }
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await pool.end();
  });
});

/**
 * `new SessionQueue({ redis })`: the caller's own ioredis client, as BullMQ advises a producer's —
 * `enableOfflineQueue: false`, to fail fast while Redis is away. The connections the queue duplicates
 * from it (a subscription's, the event publisher's) are new, and a command sent before they are ready
 * was refused at once: the add's `input_accepted` was lost and every subscription failed.
 */
describe('SessionQueue on the caller’s own ioredis client', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('own_redis');
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('with enableOfflineQueue: false, add publishes its input_accepted and subscribe and handle.events() follow; close() leaves it open', async () => {
    const redis = new Redis(fleet.config.redisUrl, { enableOfflineQueue: false });
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', resolve);
      redis.once('error', reject);
    });
    try {
      await followOwnRedis(redis);
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });

  async function followOwnRedis(redis: Redis): Promise<void> {
    const queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redis, queueName: fleet.config.queueName });
    try {
      const session = queue.subscribe('own-redis', { after: '0' });
      const handle = await queue.add('send', { sessionId: 'own-redis', input: 'hi' });
      const followed = await untilFinished(session, handle.seq);
      const own = await untilFinished(handle.events(), handle.seq);
      for (const items of [followed, own]) {
        expect(items.every((item) => item.kind === 'event')).toBe(true);
        expect(items.map((item) => (item.kind === 'event' ? item.type : 'gap'))).toEqual(expect.arrayContaining(['input_accepted', 'input_started', 'input_finished']));
        expect(items[0]).toMatchObject({ type: 'input_accepted', data: { inputSeq: handle.seq } });
      }
      expect(await handle.result({ timeoutMs: 20_000 })).toMatchObject({ status: 'completed', finalText: 'Echo: hi' });
    } finally {
      await queue.close();
    }
  }
});
