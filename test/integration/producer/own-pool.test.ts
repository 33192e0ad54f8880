import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, SessionQueue } from '../../../src/index.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

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
