import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/**
 * Fairness (docs/fleet.md, "Fairness"): a drain yields its session after a slice of
 * inputs and re-kicks it to the tail of the wait list, so one session with a deep backlog cannot hold
 * a worker while other sessions wait. One worker slot makes the property visible: without slices the
 * big session would run all of its 200 inputs before anyone else.
 */
describe('fairness between sessions', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('fairness', { WORKER_CONCURRENCY: '1' });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  async function doneCount(sessionId: string): Promise<number> {
    return (await fleet.store.listInputs(sessionId, { status: 'done', limit: 1000 })).length;
  }

  it('one session with 200 queued inputs delays the first input of 20 other sessions by a few slices only', async () => {
    const sliceInputs = 3;
    const worker = await fleet.startWorker({ settings: { sliceInputs, sweepEveryMs: 3_600_000 } });
    try {
      const big = 'big-backlog';
      for (let i = 0; i < 200; i += 1) await fleet.store.acceptInput({ sessionId: big, kind: 'send', payload: { input: `big ${i}` }, maxBytes: 1 << 20 });
      await acceptAndKick(fleet.acceptDeps, { sessionId: big, kind: 'send', payload: { input: 'big 200' } });
      await fleet.waitFor('the big session to be under way', async () => ((await doneCount(big)) >= 1 ? true : undefined));
      const smalls = Array.from({ length: 20 }, (_, i) => `small-${i}`);
      const acceptedAt = Date.now();
      for (const sessionId of smalls) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: `hello from ${sessionId}` } });
      const bigBefore = await doneCount(big);
      const latencies: number[] = [];
      for (const sessionId of smalls) {
        const [input] = await fleet.waitForSessionIdle(sessionId, 1, 60_000);
        expect(input).toMatchObject({ status: 'done', result: { finalText: `Echo: hello from ${sessionId}` } });
        latencies.push(input!.finishedAt!.getTime() - acceptedAt);
      }
      const bigAfter = await doneCount(big);
      // While the 20 first inputs were served, the big session got about one slice per round of the
      // wait list: a few slices, nowhere near its backlog.
      expect(bigAfter - bigBefore).toBeLessThanOrEqual(4 * sliceInputs);
      expect(201 - bigAfter).toBeGreaterThanOrEqual(150);
      console.info(`fairness: 20 first inputs served in ≤ ${Math.max(...latencies)} ms; big session ran ${bigAfter - bigBefore} inputs meanwhile, ${201 - bigAfter} still pending`);
      // And the backlog still drains completely, in order.
      const inputs = await fleet.waitForSessionIdle(big, 201, 120_000);
      expect(inputs.every((input) => input.status === 'done')).toBe(true);
      const users = (await fleet.transcript(big)).filter((line) => line.startsWith('user: '));
      expect(users).toEqual(Array.from({ length: 201 }, (_, i) => `user: big ${i}`));
    } finally {
      await worker.close();
    }
  }, 240_000);
});
