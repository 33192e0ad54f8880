import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';

/**
 * A tenant's cap on inputs running at once holds across worker processes and under kill -9
 * (docs/tenant-limits.md): three `loopfleet worker` processes, a tenant capped at 2 with 12 sessions
 * × 2 inputs against a slow model, and an uncapped tenant beside it. The number of the capped
 * tenant's sessions holding a live lease is sampled all along and never exceeds 2; a worker holding
 * one of its slots is SIGKILLed mid-input; its slot comes back when its lease lapses, and every input
 * of both tenants ends `completed`.
 */

const CAP = 2;
const SESSIONS = 12;
const INPUTS = 2;

describe('tenant cap on inputs running at once, across workers and kill -9', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    pf = await ProcessFleet.create('tenantcap', { LEASE_TTL_MS: '2000', WORKER_CONCURRENCY: '4', SWEEP_EVERY_MS: '1000' }, { replyDelayMs: 400 });
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it(`a tenant capped at ${CAP}: never more leased at once, a killed holder's slot comes back, every input finishes`, async () => {
    const { fleet } = pf;
    await fleet.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('capped', $1)`, [CAP]);
    await Promise.all([0, 1, 2].map(() => fleet.processes.start(pf.workerEnv)));

    let sampling = true;
    let maxCapped = 0;
    let maxOther = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const result = await fleet.pool.query<{ tenant: string; n: number }>(
          `SELECT tenant, count(*)::int AS n FROM sessions WHERE lease_expires_at > now() GROUP BY tenant`,
        );
        for (const row of result.rows) {
          if (row.tenant === 'capped') maxCapped = Math.max(maxCapped, row.n);
          else maxOther = Math.max(maxOther, row.n);
        }
        samples += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    const capped = Array.from({ length: SESSIONS }, (_, i) => `capped-${i}`);
    const other = Array.from({ length: 4 }, (_, i) => `other-${i}`);
    const text = (sessionId: string, n: number) => `${sessionId} message ${n}`;
    for (let n = 0; n < INPUTS; n += 1) {
      for (const sessionId of capped) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text(sessionId, n) }, tenant: 'capped' });
      for (const sessionId of other) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text(sessionId, n) }, tenant: 'other' });
    }

    // Once a few inputs are done, kill a worker that holds one of the capped tenant's slots mid-input.
    const victim = await fleet.waitFor(
      'a worker holding a slot of the capped tenant after 4 finished inputs',
      async () => {
        const done = await fleet.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = 'capped' AND i.status = 'done'`,
        );
        if (done.rows[0]!.n < 4) return undefined;
        const holders = await fleet.pool.query<{ owner: string; id: string }>(
          `SELECT s.lease_owner AS owner, s.id FROM sessions s JOIN session_inputs i ON i.session_id = s.id AND i.status = 'running'
            WHERE s.tenant = 'capped' AND s.lease_expires_at > now()`,
        );
        for (const holder of holders.rows) {
          const worker = fleet.processes.alive.find((candidate) => candidate.workerId === holder.owner);
          if (worker !== undefined) return { worker, sessionId: holder.id };
        }
        return undefined;
      },
      60_000,
    );
    const killedAt = Date.now();
    await victim.worker.kill();

    for (const sessionId of [...capped, ...other]) {
      const inputs = await fleet.waitForSessionIdle(sessionId, INPUTS, 90_000);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.status, input.result?.finalText])).toEqual(
        Array.from({ length: INPUTS }, (_, n) => [n + 1, 'done', 'completed', `Echo: ${text(sessionId, n)}`]),
      );
    }
    const finishedMs = Date.now() - killedAt;
    sampling = false;
    await sampler;

    // The killed holder's input was taken over: its slot came back once its lease lapsed.
    const resumed = await fleet.store.listInputs(victim.sessionId, { limit: 10 });
    expect(resumed.some((input) => input.attempts > 1)).toBe(true);
    expect(samples).toBeGreaterThan(20);
    expect(maxCapped).toBe(CAP);
    console.info(`tenant cap: ${samples} samples, at most ${maxCapped} capped and ${maxOther} uncapped leases at once; all done ${finishedMs} ms after the kill`);
  }, 180_000);
});
