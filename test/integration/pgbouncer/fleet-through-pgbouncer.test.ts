import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { eventStreamKey, timerJobId } from '../../../src/fleet/fleet-keys.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { getTimer } from '../../../src/store/timers/timer-queries.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { PGBOUNCER_MISSING, pgbouncerAvailable, startPgBouncer, type RunningPgBouncer } from '../../support/pgbouncer.js';

/**
 * The fleet behind PgBouncer 1.18 in transaction mode (docs/postgres-pooling.md): every pool of the
 * fleet — three in-process workers', the producer's, the fixture's — and the migration reach the
 * database through one PgBouncer whose 4 server connections they all share, with
 * `DATABASE_POOLER=transaction`. The same flows as straight to Postgres: inputs of many sessions in
 * order with a tool round, a tenant cap (a multi-statement transaction) and a budget, timers, and the
 * sweeper's repairs.
 */
if (!pgbouncerAvailable()) console.warn(`fleet through PgBouncer: ${PGBOUNCER_MISSING}`);

describe.runIf(pgbouncerAvailable())('the fleet through PgBouncer in transaction mode', () => {
  let bouncer: RunningPgBouncer;
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    bouncer = await startPgBouncer(inject('postgresAdminUrl'), { poolSize: 4 });
    fleet = await FleetFixture.create('pgb_fleet', { DATABASE_POOLER: 'transaction', WORKER_CONCURRENCY: '8' }, { through: bouncer.via });
    queue = SessionQueue.fromEnv(fleet.env);
  });

  afterEach(async () => {
    await Promise.allSettled(fleet.workers.splice(0).map((worker) => worker.close({ graceMs: 2_000 })));
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
    await bouncer?.stop();
  });

  it('reaches the database only through the pooler, which refuses what a direct pool sends', async () => {
    expect(fleet.config.databaseUrl).toContain(`:${bouncer.port}/`);
    // The migration ran through it: the schema is there.
    const applied = await fleet.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
    expect(applied.rows[0]!.n).toBeGreaterThan(10);
    // A pool set up for Postgres itself is refused: PgBouncer takes no statement_timeout startup parameter.
    const direct = createPgPool(fleet.config.databaseUrl, { pooler: 'none', connectionTimeoutMs: 5_000 });
    try {
      await expect(direct.query('SELECT 1')).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
    } finally {
      await direct.end();
    }
  });

  it('three workers run 12 sessions × 4 inputs (a tool round each), each in order, every input once, one input_finished each', async () => {
    await Promise.all([0, 1, 2].map(() => fleet.startWorker()));
    await queue.tenants.set('capped', { maxConcurrentInputs: 2 });
    await queue.budgets.set({ scope: 'tenant', tenant: 'capped', unit: 'tokens', period: 'day', limit: 10_000_000 });
    const sessions = Array.from({ length: 12 }, (_, i) => `pgb-${i}`);
    const text = (sessionId: string, n: number) => (n === 0 ? '/tool current_time {}' : `${sessionId} says ${n}`);
    // Each round's adds go together, the rounds one after another: a session's inputs have a defined
    // order (two adds of one session in flight at once may be accepted in either order).
    const added = [];
    for (let n = 0; n < 4; n += 1) {
      added.push(...(await Promise.all(sessions.map((sessionId, i) => queue.add('send', { sessionId, input: text(sessionId, n), tenant: i % 3 === 0 ? 'capped' : 'default' })))));
    }
    expect(added.every((handle) => !handle.duplicate)).toBe(true);
    for (const sessionId of sessions) {
      const inputs = await fleet.waitForSessionFinished(sessionId, 4, 60_000);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.status])).toEqual([1, 2, 3, 4].map((seq) => [seq, 'done', 'completed']));
      expect(inputs.slice(1).map((input) => input.result?.finalText)).toEqual([1, 2, 3].map((n) => `Echo: ${sessionId} says ${n}`));
      for (let i = 1; i < inputs.length; i += 1) expect(inputs[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(inputs[i - 1]!.finishedAt!.getTime());
      const roles = (await fleet.store.loadHistory(sessionId)).map((row) => row.message.role);
      expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
      const entries = await fleet.redis.xrange(eventStreamKey(fleet.config.queueName, sessionId), '-', '+');
      const finished = entries.filter(([, fields]) => fields[fields.indexOf('type') + 1] === 'input_finished');
      expect(finished.map(([, fields]) => (JSON.parse(fields[fields.indexOf('data') + 1]!) as { inputSeq: number }).inputSeq)).toEqual([1, 2, 3, 4]);
    }
    const stats = await queue.stats('pgb-0');
    expect(stats).toMatchObject({ inputs: { done: 4 } });
  });

  it('a one-shot and a recurring timer fire through the pooler; the sweeper sets again an alarm Redis lost', async () => {
    await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    await queue.add('timer', { sessionId: 'pgb-timer', delayMs: 0, note: 'once', timerId: 'once' });
    const [fired] = await fleet.waitForSessionFinished('pgb-timer', 1);
    expect(fired).toMatchObject({ kind: 'timer', inputId: 'timer:once:1', status: 'done' });

    await queue.timers.schedule('pgb-every', { delayMs: 0, everyMs: 1000, note: 'again', timerId: 'every' });
    await fleet.waitForSessionIdle('pgb-every', 2);
    expect(await queue.timers.cancel('pgb-every', 'every')).toBe(true);

    // No worker for this one until its alarm is gone: only the sweeper can bring it back.
    await Promise.allSettled(fleet.workers.splice(0).map((worker) => worker.close({ graceMs: 2_000 })));
    await queue.timers.schedule('pgb-lost', { delayMs: 0, note: 'lost alarm', timerId: 'lost' });
    expect(await fleet.queue.remove(timerJobId('pgb-lost', 'lost', 0))).toBe(1);
    await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    const [repaired] = await fleet.waitForSessionIdle('pgb-lost', 1);
    expect(repaired).toMatchObject({ kind: 'timer', inputId: 'timer:lost:1', status: 'done' });
    expect(await getTimer(fleet.pool, 'pgb-lost', 'lost')).toMatchObject({ status: 'fired', fireCount: 1 });
  });

  it('the sweeper runs an input whose kick never happened', async () => {
    await fleet.store.acceptInput({ sessionId: 'pgb-unkicked', kind: 'send', payload: { input: 'never kicked' }, maxBytes: 1 << 20 });
    await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    const [input] = await fleet.waitForSessionIdle('pgb-unkicked', 1);
    expect(input).toMatchObject({ status: 'done', attempts: 1, result: { finalText: 'Echo: never kicked' } });
  });
});
