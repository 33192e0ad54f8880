import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { kickSession } from '../../../src/fleet/kick.js';
import { fairDispatch, tenantSettingsCache } from '../../../src/store/tenants/tenant-settings-source.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/**
 * Fair dispatch between tenants (docs/fair-dispatch.md), the issue's test: tenant `flood` queues 5,000
 * inputs over 500 sessions; once two `loopfleet worker` processes (4 drains each, the scripted model)
 * are busy with it, tenant `late` sends the first inputs of 20 sessions. Each of those must start
 * within a few drain slices — stated as: while it waited, the flood started at most
 * {@link SLICES_BOUND} slices' worth of inputs per worker slot. In FIFO order it would wait behind
 * every flood drain already queued (about 500 sessions × 10 inputs).
 */
const SESSIONS = 500;
const INPUTS_PER_SESSION = 10;
const WORKERS = 2;
const CONCURRENCY = 4;
const SLICE_INPUTS = 10;
const SLICES_BOUND = 3;

describe('fair dispatch between tenants', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('tenant_fair', { WORKER_CONCURRENCY: String(CONCURRENCY), DRAIN_SLICE_INPUTS: String(SLICE_INPUTS), LEASE_TTL_MS: '10000' });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it(`a flood of ${SESSIONS * INPUTS_PER_SESSION} inputs delays another tenant's first inputs by a few slices only`, async () => {
    const fair = fairDispatch(true, tenantSettingsCache(fleet.pool, () => undefined), fleet.redis);
    const deps = Object.assign({}, fleet.acceptDeps, { fair });
    const flood = Array.from({ length: SESSIONS }, (_, i) => `flood-${i}`);
    // The flood's inputs go in before any worker runs (the kicks last), so its line is full.
    for (let n = 0; n < INPUTS_PER_SESSION; n += 1) {
      await Promise.all(flood.map((sessionId) => fleet.store.acceptInput({ sessionId, tenant: 'flood', kind: 'send', payload: { input: `${sessionId} #${n}` }, maxBytes: 1 << 20 })));
    }
    for (const sessionId of flood) await kickSession({ queue: fleet.shards, fair }, { sessionId, tenant: 'flood' });
    await Promise.all(Array.from({ length: WORKERS }, () => fleet.processes.start()));
    await fleet.waitFor('the flood under way', async () => ((await countInputs('flood', 'done')) >= 200 ? true : undefined), 60_000);

    const late = Array.from({ length: 20 }, (_, i) => `late-${i}`);
    for (const sessionId of late) await acceptAndKick(deps, { sessionId, tenant: 'late', kind: 'send', payload: { input: `hello from ${sessionId}` } });
    for (const sessionId of late) {
      const [input] = await fleet.waitForSessionIdle(sessionId, 1, 120_000);
      expect(input).toMatchObject({ status: 'done', result: { finalText: `Echo: hello from ${sessionId}` } });
    }

    // Per late input: the flood's inputs that started between its accept and its own start.
    const { rows } = await fleet.pool.query<{ sessionId: string; waitMs: number; floodStarted: number }>(
      `SELECT l.session_id AS "sessionId",
              (extract(epoch FROM l.started_at - l.accepted_at) * 1000)::float8 AS "waitMs",
              (SELECT count(*) FROM session_inputs f JOIN sessions s ON s.id = f.session_id
                WHERE s.tenant = 'flood' AND f.started_at > l.accepted_at AND f.started_at <= l.started_at)::int AS "floodStarted"
         FROM session_inputs l JOIN sessions ls ON ls.id = l.session_id
        WHERE ls.tenant = 'late'`,
    );
    expect(rows).toHaveLength(20);
    const worst = Math.max(...rows.map((row) => row.floodStarted));
    const notStarted = await countInputs('flood', 'pending');
    console.info(
      `tenant fairness: the late tenant's 20 first inputs waited ≤ ${Math.round(Math.max(...rows.map((row) => row.waitMs)))} ms; ` +
        `the flood started ≤ ${worst} inputs meanwhile (bound ${SLICES_BOUND * WORKERS * CONCURRENCY * SLICE_INPUTS}); ${notStarted} flood inputs were still pending after`,
    );
    expect(worst).toBeLessThanOrEqual(SLICES_BOUND * WORKERS * CONCURRENCY * SLICE_INPUTS);
    // The flood was far from done: in FIFO order the late inputs would have waited for most of it.
    expect(notStarted).toBeGreaterThan(SESSIONS * INPUTS_PER_SESSION / 2);
  }, 300_000);

  async function countInputs(tenant: string, status: string): Promise<number> {
    const { rows } = await fleet.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = $1 AND i.status = $2`,
      [tenant, status],
    );
    return rows[0]!.n;
  }
});
