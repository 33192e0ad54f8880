import { singleNodeLayout } from '../../../src/fleet/redis-layout.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEvent } from '../../../src/events/event-body.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';
import { publishEventsCommand, type PublishTarget } from '../../../src/events/publish-events-script.js';
import { eventDeletedKey, eventFinishedKey, eventSeqKey, eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { SessionAdmin } from '../../../src/producer/session-admin.js';
import { InMemorySessionStore } from '../../support/fakes/in-memory-session-store.js';
import { openEventsFixture, type EventsFixture } from './events-fixture.js';

const round = (roundIndex: number): FleetEvent => ({ type: 'round_started', roundIndex });

/**
 * The deletion fence in the real script: `sessions.delete` removes the session's keys and leaves its
 * last lease token behind; the publish script then refuses whole any part written under that token or
 * an older one, and lets through a producer's events (no token) and a later lease's.
 */
describe('the publish script refuses the events of a deleted session', () => {
  let fx: EventsFixture;
  let redis: Redis;

  beforeAll(() => {
    fx = openEventsFixture('events_deletion_fence');
    redis = fx.connect();
  });

  afterAll(async () => {
    await fx.close();
  });

  const target = (sessionId: string): PublishTarget => ({
    streamKey: eventStreamKey(fx.queue, sessionId),
    seqKey: eventSeqKey(fx.queue, sessionId),
    finishedKey: eventFinishedKey(fx.queue, sessionId),
    deletedKey: eventDeletedKey(fx.queue, sessionId),
  });
  const part = (sessionId: string, fence: number | undefined, count = 1) => ({
    target: target(sessionId),
    entries: Array.from({ length: count }, (_, i) => encodeEvent(sessionId, 1, round(i))),
    skip: 0,
    report: true,
    refreshExpiry: false,
    fence,
  });
  const seqs = async (sessionId: string) =>
    (await redis.xrange(eventStreamKey(fx.queue, sessionId), '-', '+')).map(([, fields]) => (JSON.parse(fields[3]!) as { seq: number }).seq);

  it('after a delete, refuses a part under the old lease with lease.lost, writing nothing; the other parts of the call apply', async () => {
    const publish = publishEventsCommand(redis, { maxLen: 100, idleExpirySeconds: 300 });
    const store = new InMemorySessionStore();
    const admin = new SessionAdmin({ store, redis, queueName: fx.queue, layout: singleNodeLayout(fx.queue), logger: null, redisTimeoutMs: 5_000, run: (work) => work() });
    const [deleted, other] = [fx.sessionId('deleted'), fx.sessionId('other')];
    await store.createSession({ id: deleted });
    const lease = await store.acquireLease({ sessionId: deleted, owner: 'w1', ttlMs: 30_000 });
    if (!lease.acquired) throw new Error('lease not acquired');
    expect(await publish([part(deleted, lease.token, 2)])).toEqual([[expect.any(String), expect.any(String)]]);

    expect(await admin.delete(deleted)).toBe(true);
    expect(await redis.exists(eventStreamKey(fx.queue, deleted), eventSeqKey(fx.queue, deleted))).toBe(0);
    expect(await redis.get(eventDeletedKey(fx.queue, deleted))).toBe(String(lease.token));
    expect(await redis.ttl(eventDeletedKey(fx.queue, deleted))).toBeGreaterThan(0);

    const [refused, applied, older] = await publish([part(deleted, lease.token, 3), part(other, lease.token), part(deleted, lease.token - 1)]);
    expect(refused).toMatchObject({ code: 'lease.lost', details: { leaseToken: lease.token } });
    expect(older).toMatchObject({ code: 'lease.lost' });
    expect(applied).toEqual([expect.any(String)]);
    expect(await redis.exists(eventStreamKey(fx.queue, deleted), eventSeqKey(fx.queue, deleted))).toBe(0);

    // The session created again: a producer's event (no lease) and a later lease's start at seq 1.
    expect(await publish([part(deleted, undefined)])).toEqual([[expect.any(String)]]);
    expect(await publish([part(deleted, lease.token + 1)])).toEqual([[expect.any(String)]]);
    expect(await seqs(deleted)).toEqual([1, 2]);
  });

  it('a delete never lowers the fence; a session never leased leaves none', async () => {
    const store = new InMemorySessionStore();
    const admin = new SessionAdmin({ store, redis, queueName: fx.queue, layout: singleNodeLayout(fx.queue), logger: null, redisTimeoutMs: 5_000, run: (work) => work() });
    const id = fx.sessionId('lowered');
    await redis.set(eventDeletedKey(fx.queue, id), '1000');
    await store.createSession({ id });
    const lease = await store.acquireLease({ sessionId: id, owner: 'w1', ttlMs: 30_000 });
    if (!lease.acquired || lease.token >= 1000) throw new Error('expected a small token from a fresh in-memory store');
    expect(await admin.delete(id)).toBe(true);
    expect(await redis.get(eventDeletedKey(fx.queue, id))).toBe('1000');

    const never = fx.sessionId('never-leased');
    await store.createSession({ id: never });
    expect(await admin.delete(never)).toBe(true);
    expect(await redis.exists(eventDeletedKey(fx.queue, never))).toBe(0);
  });
});
