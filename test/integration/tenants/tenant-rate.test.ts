import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopfleetError, TenantRateLimitedError } from '../../../src/core/errors/index.js';
import { rateBucketKey } from '../../../src/fleet/tenant-rate-bucket.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { RawProducer } from '../fleet/fixtures/raw-clients.js';
import { bearer, GatewayFixture, token } from '../gateway/gateway-fixture.js';

/** A tenant's admission rate (`maxInputsPerSecond`, docs/tenant-limits.md) at every way in. */
describe('tenant admission rate: the client and the raw path', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  let producer: RawProducer;

  beforeAll(async () => {
    fleet = await FleetFixture.create('tenant_rate');
    await fleet.pool.query(`INSERT INTO tenant_settings (tenant, max_inputs_per_second) VALUES ('slow', 1), ('rawslow', 1), ('unlimited', NULL)`);
    await fleet.startWorker();
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    producer = await RawProducer.open(fleet.config.redisUrl, fleet.config.queueName);
  }, 60_000);

  afterAll(async () => {
    await producer?.close();
    await queue?.close();
    await fleet?.close();
  });

  async function inputsOf(sessionId: string): Promise<number> {
    const result = await fleet.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM session_inputs WHERE session_id = $1`, [sessionId]);
    return result.rows[0]!.n;
  }

  it('over the rate, add throws tenant.rate_limited with retryAfterMs and writes nothing; later it is admitted', async () => {
    await queue.add('send', { sessionId: 'slow-1', input: 'first', tenant: 'slow' });
    const refused = await queue.add('send', { sessionId: 'slow-1', input: 'second', tenant: 'slow' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TenantRateLimitedError);
    const error = refused as TenantRateLimitedError;
    expect(error.code).toBe('tenant.rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ tenant: 'slow', maxInputsPerSecond: 1 });
    expect(error.details.retryAfterMs).toBeGreaterThan(0);
    expect(error.details.retryAfterMs).toBeLessThanOrEqual(1_000);
    // An add that does not name the tenant counts against its session's.
    await expect(queue.add('send', { sessionId: 'slow-1', input: 'third' })).rejects.toMatchObject({ code: 'tenant.rate_limited' });
    expect(await inputsOf('slow-1')).toBe(1);
    // Admitted again once the bucket refilled: retried until then, within a deadline.
    const started = Date.now();
    for (;;) {
      const added = await queue.add('send', { sessionId: 'slow-1', input: 'again' }).then(
        () => true,
        (caught: unknown) => {
          if (isLoopfleetError(caught) && caught.code === 'tenant.rate_limited') return false;
          throw caught;
        },
      );
      if (added) break;
      if (Date.now() - started > 5_000) throw new Error('not admitted again within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await inputsOf('slow-1')).toBe(2);
  });

  it('a tenant without a rate (no row, or a row without one) is never limited and leaves no bucket', async () => {
    for (let n = 0; n < 5; n += 1) await queue.add('send', { sessionId: 'free-1', input: `n${n}`, tenant: 'unlimited' });
    for (let n = 0; n < 5; n += 1) await queue.add('send', { sessionId: 'free-2', input: `n${n}` });
    expect(await inputsOf('free-1')).toBe(5);
    expect(await inputsOf('free-2')).toBe(5);
    expect(await fleet.redis.exists(rateBucketKey(fleet.config.queueName, 'unlimited'), rateBucketKey(fleet.config.queueName, 'default'))).toBe(0);
  });

  it('the raw path delays a job over the rate instead of failing it, and ingests it later', async () => {
    const jobs = await Promise.all([0, 1, 2].map((n) => producer.add('send', { sessionId: `rawslow-${n}`, input: `raw ${n}`, tenant: 'rawslow' })));
    const values = await Promise.all(jobs.map((job) => fleet.waitFor(`job ${job.id} completed`, async () => ((await job.getState()) === 'completed' ? true : undefined), 30_000)));
    expect(values).toEqual([true, true, true]);
    const accepted = await fleet.pool.query<{ at: Date }>(
      `SELECT i.accepted_at AS at FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = 'rawslow' ORDER BY i.accepted_at`,
    );
    expect(accepted.rows).toHaveLength(3);
    // One a second, burst one: the third is admitted at least two refills after the first (less a margin for clock rounding).
    expect(accepted.rows[2]!.at.getTime() - accepted.rows[0]!.at.getTime()).toBeGreaterThanOrEqual(1_900);
    for (const job of jobs) expect((await fleet.queue.getJob(job.id!))?.failedReason ?? null).toBeNull();
  });
});

describe('tenant admission rate: the gateway', () => {
  let gw: GatewayFixture;

  beforeAll(async () => {
    gw = await GatewayFixture.create('tenant_rate_gateway');
    await gw.fleet.pool.query(`INSERT INTO tenant_settings (tenant, max_inputs_per_second) VALUES ('gwslow', 0.5)`);
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  it('answers 429 tenant.rate_limited with Retry-After from the bucket', async () => {
    const headers = bearer(await token({ tenant: 'gwslow', scope: 'write', sub: 'g' }));
    const first = await gw.app.inject({ method: 'POST', url: '/v1/sessions/gw-rate-1/inputs', headers, payload: { input: 'hi' } });
    expect(first.statusCode).toBe(202);
    const second = await gw.app.inject({ method: 'POST', url: '/v1/sessions/gw-rate-1/inputs', headers, payload: { input: 'again' } });
    expect(second.statusCode).toBe(429);
    expect(second.json().error).toMatchObject({ code: 'tenant.rate_limited', details: { tenant: 'gwslow', maxInputsPerSecond: 0.5 } });
    // 0.5 a second: the next input in up to 2 s.
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(2);
  });
});
