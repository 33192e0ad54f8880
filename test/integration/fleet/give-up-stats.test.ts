import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kickSession } from '../../../src/fleet/kick.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { GIVEN_UP_TOTALS, giveUpScenarios, RECORDED_USAGE, spentAndAbandoned, type GiveUpScenarioContext } from '../../support/give-up-scenarios.js';
import { sessionEvents } from './fixtures/fleet-helpers.js';

/**
 * A given-up (poison) input's usage in the session's stats, on Postgres: the shared scenarios on the
 * real store, then a real worker giving an input up, read back through `SessionQueue.stats()` and the
 * session's event stream.
 */
let fleet: FleetFixture;
const run = randomBytes(4).toString('hex');
let counter = 0;

const ctx: GiveUpScenarioContext = {
  get store() {
    return fleet.store;
  },
  lapse: async (sessionId) => {
    await fleet.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [sessionId]);
  },
  id: (label) => `${label}-${run}-${(counter += 1)}`,
};

beforeAll(async () => {
  fleet = await FleetFixture.create('give_up_stats');
});

afterAll(async () => {
  await fleet?.close();
});

giveUpScenarios('giveUpInput (Postgres store)', ctx);

describe('a worker that gives an input up', () => {
  it('counts what the input consumed in SessionQueue.stats() and reports it in its input_finished', async () => {
    const sessionId = ctx.id('worker-give-up');
    await spentAndAbandoned(ctx, sessionId);
    const worker = await fleet.startWorker({ settings: { sweepEveryMs: 3_600_000, maxInputAttempts: 1 } });
    const queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, pooler: fleet.config.worker.pooler, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    try {
      await kickSession({ queue: fleet.shards }, { sessionId, tenant: 'default' });
      const [input] = await fleet.waitForSessionFinished(sessionId, 1);
      expect(input).toMatchObject({ status: 'failed', attempts: 2, errorCode: 'system.infrastructure' });
      const stats = await queue.stats(sessionId);
      expect(stats.totals).toMatchObject(GIVEN_UP_TOTALS);
      expect(stats.inputs).toMatchObject({ failed: 1, total: 1 });
      const finished = await fleet.waitFor('the input_finished', async () =>
        (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).find((event) => event.type === 'input_finished'),
      );
      expect(finished.data).toMatchObject({ inputSeq: 1, status: 'failed', rounds: 2, toolCalls: 0, usage: RECORDED_USAGE });
      expect((await queue.result(sessionId, 1)).usage).toEqual(RECORDED_USAGE);
    } finally {
      await queue.close();
      await worker.close();
    }
  });
});
