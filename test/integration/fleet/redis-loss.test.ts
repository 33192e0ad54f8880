import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { heldReply } from './fixtures/fleet-helpers.js';
import { PrivateRedis } from './fixtures/private-redis.js';

/**
 * Redis loses everything mid-run (R4: a FLUSHALL, or a restart without persistence) on a redis-server
 * of this file alone. Postgres holds the truth: the kicks waiting in Redis are gone and so is the
 * sweeper's schedule, yet every accepted input runs, once (I1, I3).
 */
describe('Redis loses its data mid-run (private redis-server)', () => {
  let redis: PrivateRedis;
  let fleet: FleetFixture;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    // One job at a time: the kicks of the other sessions wait in Redis while the first drain runs.
    fleet = await FleetFixture.create('redis_loss', { REDIS_URL: redis.url, WORKER_CONCURRENCY: '1' });
  });

  afterAll(async () => {
    await fleet?.close();
    await redis?.stop();
  });

  async function send(sessionId: string, text: string) {
    return acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });
  }

  /** Each session's transcript once all its inputs finished: every input done, run once. */
  async function expectTranscripts(expected: Record<string, string[]>) {
    for (const [sessionId, transcript] of Object.entries(expected)) {
      const inputs = await fleet.waitForSessionIdle(sessionId, transcript.length / 2, 45_000);
      expect(inputs.map((input) => [input.status, input.attempts])).toEqual(inputs.map(() => ['done', 1]));
      expect(await fleet.transcript(sessionId)).toEqual(transcript);
    }
  }

  it.each([
    ['flush', 'FLUSHALL', () => redis.flushAll()],
    ['restart', 'a restart without persistence', () => redis.restart()],
  ])('%s: %s while a drain runs and other kicks wait — every input still runs exactly once', async (run, _label, loseRedis) => {
    const held = heldReply({ text: 'survived' });
    const llm = new ScriptedLlm([held.step], { whenExhausted: 'echo' });
    const worker = await fleet.startWorker({ llm, settings: { sweepEveryMs: 500, sweepGraceMs: 300 } });
    try {
      await send(`${run}-a`, 'in flight');
      await held.entered;
      await send(`${run}-b`, 'kick waiting in Redis');
      await send(`${run}-c`, 'another waiting kick');
      await send(`${run}-a`, 'queued behind the running input');
      expect((await fleet.queue.getJobCounts('waiting')).waiting).toBe(2);
      await loseRedis();
      held.release();
      await send(`${run}-d`, 'accepted after the loss');
      await expectTranscripts({
        [`${run}-a`]: ['user: in flight', 'assistant: survived', 'user: queued behind the running input', 'assistant: Echo: queued behind the running input'],
        [`${run}-b`]: ['user: kick waiting in Redis', 'assistant: Echo: kick waiting in Redis'],
        [`${run}-c`]: ['user: another waiting kick', 'assistant: Echo: another waiting kick'],
        [`${run}-d`]: ['user: accepted after the loss', 'assistant: Echo: accepted after the loss'],
      });
    } finally {
      await worker.close({ graceMs: 2_000 });
    }
  });
});
