import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/**
 * `SessionQueue.fromEnv` takes the settings a producer shares with the workers. Its `input_accepted`
 * writes trim the session's stream and push its expiry back, so it must keep the workers'
 * retention, not the publisher's defaults; and its pool must keep to `DATABASE_POOL_SIZE`, which
 * the connection budget is planned with.
 */
describe('SessionQueue.fromEnv: the settings shared with the workers', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    fleet = await FleetFixture.create('producer_env');
    queue = SessionQueue.fromEnv({
      ...fleet.env,
      LOOPFLEET_EVENTS_TTL_SECONDS: '120',
      LOOPFLEET_EVENTS_MAXLEN: '10',
      DATABASE_POOL_SIZE: '2',
      // Below the pool size, as it must be (the default, 2, would leave no connection for reads).
      DATABASE_BATCH_STATEMENTS: '1',
    });
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
  });

  it("writes input_accepted with the workers' stream retention (LOOPFLEET_EVENTS_MAXLEN, LOOPFLEET_EVENTS_TTL_SECONDS)", async () => {
    const streamKey = eventStreamKey(fleet.config.queueName, 'retained');
    // A stream a worker kept longer: three whole stream nodes (100 entries each), no expiry soon.
    const pipeline = fleet.redis.pipeline();
    for (let i = 0; i < 250; i += 1) pipeline.xadd(streamKey, '*', 'type', 'round_started', 'data', '{}');
    pipeline.expire(streamKey, 86_400);
    await pipeline.exec();
    const handle = await queue.add('send', { sessionId: 'retained', input: 'hello' });
    for await (const item of handle.events()) {
      expect(item).toMatchObject({ kind: 'event', type: 'input_accepted' });
      break;
    }
    const ttl = await fleet.redis.ttl(streamKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(120);
    // Trimming is approximate (whole nodes): with the default of 10,000 nothing would go.
    expect(await fleet.redis.xlen(streamKey)).toBeLessThan(200);
  });

  it('opens at most DATABASE_POOL_SIZE connections', async () => {
    await queue.add('send', { sessionId: 'pooled', input: 'hello' });
    // Six reads at once: a pool of ten would open six connections for them.
    await Promise.all(Array.from({ length: 6 }, () => queue.history('pooled')));
    const { rows } = await fleet.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'loopfleet-client'",
    );
    expect(rows[0]!.n).toBe(2);
  });
});
