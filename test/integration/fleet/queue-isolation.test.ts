/**
 * Two queues (`LOOPFLEET_QUEUE`) on one database, side by side: each sweeper wakes only its own
 * queue's stranded sessions, each worker runs and publishes only its own, and an add through one
 * queue to the other's session is refused with `session.queue_mismatch`, writing nothing.
 */
import { Queue } from 'bullmq';
import { QueueShards } from '../../../src/fleet/queue-shards.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { acceptAndKick, type AcceptDeps } from '../../../src/fleet/accept-input.js';
import { createLogger } from '../../../src/observability/logger.js';
import { startWorker, type RunningWorker } from '../../../src/worker/start-worker.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { uniqueName } from '../../support/test-database.js';

const SWEEP = { SWEEP_EVERY_MS: '200', SWEEP_GRACE_MS: '100' };

describe('two queues on one database', () => {
  let fleet: FleetFixture;
  let otherName: string;
  let otherQueue: Queue;
  let otherDeps: AcceptDeps;
  let other: RunningWorker | null = null;

  beforeAll(async () => {
    fleet = await FleetFixture.create('queue_isolation', SWEEP);
    otherName = uniqueName('queue_isolation_b');
    otherQueue = new Queue(otherName, { connection: fleet.redis });
    otherQueue.on('error', () => undefined);
    otherDeps = { store: fleet.store, queue: QueueShards.single(otherQueue), maxInputBytes: fleet.config.worker.maxInputBytes };
  });

  afterAll(async () => {
    await other?.close({ graceMs: 2_000 });
    await otherQueue?.obliterate({ force: true }).catch(() => {});
    await otherQueue?.close();
    for (const key of await fleet.redis.keys(`${otherName}:*`)) await fleet.redis.del(key);
    await fleet?.close();
  });

  const streamTypes = async (queue: string, sessionId: string) =>
    (await fleet.redis.xrange(eventStreamKey(queue, sessionId), '-', '+')).map(([, fields]) => fields[fields.indexOf('type') + 1]);

  it("wakes only its own queue's stranded sessions; the other queue's wait for their own worker", async () => {
    // Stranded on purpose: stored without a kick, as when the kick was lost.
    await fleet.store.acceptInput({ sessionId: 'iso-a', kind: 'send', payload: { input: 'for a' }, maxBytes: 10_000, queue: fleet.config.queueName });
    await fleet.store.acceptInput({ sessionId: 'iso-b', kind: 'send', payload: { input: 'for b' }, maxBytes: 10_000, queue: otherName });
    await fleet.startWorker();
    await fleet.waitForSessionFinished('iso-a', 1);
    // The sweep that woke iso-a saw iso-b stranded as long: it left it alone, and kept going.
    const sweptAfter = Date.now();
    await fleet.waitFor('two more sweeps', async () => (Date.now() - sweptAfter > 1_000 ? true : undefined));
    expect((await fleet.store.listInputs('iso-b', { limit: 10 })).map((input) => input.status)).toEqual(['pending']);
    expect(await streamTypes(fleet.config.queueName, 'iso-b')).toEqual([]);

    const config = loadConfig(Object.assign({}, fleet.env, { LOOPFLEET_QUEUE: otherName }));
    other = await startWorker(config, { logger: createLogger({ level: 'silent', format: 'json', redactContent: true }), healthServer: false });
    await fleet.waitFor('iso-b done on its own queue', async () => {
      const [input] = await fleet.store.listInputs('iso-b', { limit: 10 });
      return input?.status === 'done' ? input : undefined;
    });
    await fleet.waitFor('iso-b finished on its own stream', async () => ((await streamTypes(otherName, 'iso-b')).includes('input_finished') ? true : undefined));
    expect(await streamTypes(fleet.config.queueName, 'iso-b')).toEqual([]);
    expect(await streamTypes(otherName, 'iso-a')).toEqual([]);
    expect(await fleet.transcript('iso-b')).toEqual(['user: for b', 'assistant: Echo: for b']);
  });

  it("refuses an add through one queue to the other's session, and runs each queue's adds on its own worker", async () => {
    await expect(acceptAndKick(otherDeps, { sessionId: 'iso-a', kind: 'send', payload: { input: 'crossing' } })).rejects.toMatchObject({
      code: 'session.queue_mismatch',
      details: { sessionId: 'iso-a', queue: otherName, sessionQueue: fleet.config.queueName },
    });
    await expect(acceptAndKick(fleet.acceptDeps, { sessionId: 'iso-b', kind: 'send', payload: { input: 'crossing' } })).rejects.toMatchObject({
      code: 'session.queue_mismatch',
    });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'iso-a', kind: 'send', payload: { input: 'again a' } });
    await acceptAndKick(otherDeps, { sessionId: 'iso-b', kind: 'send', payload: { input: 'again b' } });
    await fleet.waitForSessionFinished('iso-a', 2);
    await fleet.waitFor('iso-b second input', async () => {
      const inputs = await fleet.store.listInputs('iso-b', { limit: 10 });
      return inputs.length === 2 && inputs.every((input) => input.status === 'done') ? true : undefined;
    });
    expect((await fleet.store.listInputs('iso-a', { limit: 10 })).map((input) => input.seq)).toEqual([1, 2]);
    expect(await fleet.transcript('iso-b')).toEqual(['user: for b', 'assistant: Echo: for b', 'user: again b', 'assistant: Echo: again b']);
    expect(await streamTypes(fleet.config.queueName, 'iso-b')).toEqual([]);
  });

  it("re-arms only its own queue's overdue timers", async () => {
    await fleet.pool.query(`INSERT INTO sessions (id, queue) VALUES ('iso-timer-b', $1)`, [otherName]);
    await fleet.pool.query(`INSERT INTO timers (session_id, timer_id, due_at, note) VALUES ('iso-timer-b', 't1', now() - interval '1 hour', 'wake b')`);
    const { PostgresTimerStore } = await import('../../../src/store/timers/postgres-timer-store.js');
    const timers = new PostgresTimerStore(fleet.pool);
    const mine = await timers.findOverdueTimers({ graceMs: 0, limit: 100, queue: fleet.config.queueName });
    const theirs = await timers.findOverdueTimers({ graceMs: 0, limit: 100, queue: otherName });
    expect(mine.map((timer) => timer.sessionId)).not.toContain('iso-timer-b');
    expect(theirs.map((timer) => timer.sessionId)).toContain('iso-timer-b');
  });

  it("refuses a timer or a lease take through another queue, and a legacy session goes to the first queue that takes it", async () => {
    const { PostgresTimerStore } = await import('../../../src/store/timers/postgres-timer-store.js');
    const timers = new PostgresTimerStore(fleet.pool);
    await expect(timers.scheduleTimer({ sessionId: 'iso-a', delayMs: 60_000, note: 'crossing', queue: otherName })).rejects.toMatchObject({ code: 'session.queue_mismatch' });
    expect(await timers.listTimers('iso-a', { all: true })).toEqual([]);
    await expect(fleet.store.acquireLeaseAndClaim({ sessionId: 'iso-a', owner: 'other', ttlMs: 5_000, queue: otherName })).rejects.toMatchObject({ code: 'session.queue_mismatch' });
    await fleet.pool.query(`INSERT INTO sessions (id) VALUES ('iso-legacy')`);
    const lease = await fleet.store.acquireLeaseAndClaim({ sessionId: 'iso-legacy', owner: 'other', ttlMs: 5_000, queue: otherName });
    expect(lease.acquired).toBe(true);
    expect((await fleet.pool.query(`SELECT queue FROM sessions WHERE id = 'iso-legacy'`)).rows[0]).toEqual({ queue: otherName });
    await expect(fleet.store.acquireLeaseAndClaim({ sessionId: 'iso-legacy', owner: 'mine', ttlMs: 5_000, queue: fleet.config.queueName })).rejects.toMatchObject({ code: 'session.queue_mismatch' });
  });
});
