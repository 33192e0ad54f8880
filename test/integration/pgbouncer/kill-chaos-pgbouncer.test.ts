import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { PGBOUNCER_MISSING, pgbouncerAvailable, startPgBouncer, type RunningPgBouncer } from '../../support/pgbouncer.js';
import { seededRandom } from '../../support/seeded-random.js';
import type { WorkerProcess } from '../../support/worker-process.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';

/**
 * kill -9 behind PgBouncer (test/integration/fleet/kill-chaos.test.ts, through the pooler): three
 * `loopfleet worker` processes with `DATABASE_POOLER=transaction` share PgBouncer's 4 server
 * connections; one ready worker is SIGKILLed every 1–2 s (a killed client's server connection goes
 * back to PgBouncer's pool mid-statement or between two). Every input must finish exactly once, in
 * order, with one `input_finished` each.
 */
if (!pgbouncerAvailable()) console.warn(`kill -9 through PgBouncer: ${PGBOUNCER_MISSING}`);

const SESSIONS = 12;
const INPUTS = 4;
const MAX_KILLS = 5;

describe.runIf(pgbouncerAvailable())('kill -9 of worker processes behind PgBouncer', () => {
  let bouncer: RunningPgBouncer;
  let pf: ProcessFleet;

  beforeAll(async () => {
    bouncer = await startPgBouncer(inject('postgresAdminUrl'), { poolSize: 4 });
    pf = await ProcessFleet.create('pgb_chaos', { LEASE_TTL_MS: '2000', WORKER_CONCURRENCY: '4', DATABASE_POOLER: 'transaction' }, { replyDelayMs: 500, through: bouncer.via });
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
    await bouncer?.stop();
  });

  it(`${SESSIONS} sessions × ${INPUTS} inputs, a worker SIGKILLed every 1–2 s: every input done exactly once, in order`, async () => {
    const { fleet } = pf;
    expect(fleet.config.databaseUrl).toContain(`:${bouncer.port}/`);
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
    const next = seededRandom(seed);
    await Promise.all([0, 1, 2].map(() => fleet.processes.start(pf.workerEnv)));
    const sessions = Array.from({ length: SESSIONS }, (_, i) => `pgb-chaos-${i}`);
    const text = (sessionId: string, n: number) => `${sessionId} message ${n}`;
    for (let n = 0; n < INPUTS; n += 1) {
      for (const sessionId of sessions) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text(sessionId, n) } });
    }
    const finished = async () => {
      const result = await fleet.pool.query<{ open: string }>(`SELECT count(*) AS open FROM session_inputs WHERE status IN ('pending', 'running')`);
      return Number(result.rows[0]!.open) === 0;
    };
    const ready = (worker: WorkerProcess) => worker.exit === null && worker.workerId !== undefined;
    let kills = 0;
    const deadline = Date.now() + 150_000;
    while (!(await finished())) {
      if (Date.now() > deadline) throw new Error(`chaos run through PgBouncer (seed ${seed}) did not finish in time\n${fleet.processes.diagnostics()}\n${bouncer.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000 + Math.floor(next() * 1_000)));
      const candidates = fleet.processes.alive.filter(ready);
      if (kills >= MAX_KILLS || candidates.length < 2) continue;
      kills += 1;
      await candidates[Math.floor(next() * candidates.length)]!.kill();
      fleet.processes.spawn(pf.workerEnv);
    }
    // One more input per session: its drain publishes any input_finished a killed holder owed.
    for (const sessionId of sessions) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text(sessionId, INPUTS) } });
    for (const sessionId of sessions) {
      const inputs = await fleet.waitForSessionFinished(sessionId, INPUTS + 1, 60_000);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.finalText])).toEqual(
        Array.from({ length: INPUTS + 1 }, (_, n) => [n + 1, 'done', `Echo: ${text(sessionId, n)}`]),
      );
      expect(await fleet.transcript(sessionId)).toEqual(
        Array.from({ length: INPUTS + 1 }, (_, n) => [`user: ${text(sessionId, n)}`, `assistant: Echo: ${text(sessionId, n)}`]).flat(),
      );
      const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
      expect(events.filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq)).toEqual([1, 2, 3, 4, 5]);
    }
    expect(kills).toBeGreaterThanOrEqual(2);
    console.info(`chaos through PgBouncer (seed ${seed}): ${kills} workers killed; ${fleet.processes.all.length} processes started`);
  }, 240_000);
});
