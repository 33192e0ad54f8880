import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { parkedKey } from '../../../src/fleet/tenant-parking.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/**
 * Parked sessions of a capped tenant are woken by the releases of the tenant's drains, not by the
 * sweeper (docs/tenant-limits.md): with the sweeper out of the way, a tenant capped at 1 runs its
 * sessions one after the other, each parked session kicked by the release before it.
 */
describe('tenant cap: parked sessions woken on release', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('tenant_cap_wake', { WORKER_CONCURRENCY: '8' });
  }, 60_000);

  afterAll(async () => {
    await fleet?.close();
  });

  it('a tenant capped at 1 with 8 sessions: all finish with no sweep, one at a time', async () => {
    await fleet.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('solo', 1)`);
    // No sweep can help: the first runs at once but finds nothing past a 10-minute grace.
    await fleet.startWorker({ llm: new ScriptedLlm([], { whenExhausted: 'echo' }), settings: { sweepEveryMs: 600_000, sweepGraceMs: 600_000 } });
    const sessions = Array.from({ length: 8 }, (_, i) => `solo-${i}`);
    await Promise.all(sessions.map((sessionId) => acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: `hello ${sessionId}` }, tenant: 'solo' })));
    for (const sessionId of sessions) {
      const [input] = await fleet.waitForSessionIdle(sessionId, 1, 30_000);
      expect(input).toMatchObject({ status: 'done', result: { status: 'completed' } });
    }
    // One at a time: no two runs of the tenant overlapped.
    const runs = (await Promise.all(sessions.map(async (sessionId) => (await fleet.store.listInputs(sessionId, { limit: 1 }))[0]!)))
      .map((input) => [input.startedAt!.getTime(), input.finishedAt!.getTime()] as const)
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < runs.length; i += 1) expect(runs[i]![0]).toBeGreaterThanOrEqual(runs[i - 1]![1]);
    // Nothing is left parked.
    expect(await fleet.redis.zcard(parkedKey(fleet.config.queueName, 'solo'))).toBe(0);
  }, 60_000);
});
