import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelChannel } from '../../../src/fleet/fleet-keys.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { heldReply, InstrumentedStore } from './fixtures/fleet-helpers.js';

/**
 * The cancel channel is open to anyone who may PUBLISH on the queue's Redis: a message there only
 * makes the lease holder read the session's durable cancel request from Postgres (docs/invariants.md,
 * S2). The lease is long, so the periodic re-read of the flag (every third of it) never comes into
 * play: whatever cancels here, cancels through the message.
 */
describe('the cancel channel wakes a check of the durable flag, it does not cancel by itself', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  const LONG_LEASE = { leaseTtlMs: 120_000 };

  beforeAll(async () => {
    fleet = await FleetFixture.create('cancel_forged');
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, pooler: fleet.config.worker.pooler, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName, recheckMs: 60_000 });
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
  });

  const status = async (sessionId: string) => (await fleet.store.getInput(sessionId, 1))?.status;

  it('a forged PUBLISH on the cancel channel, with no cancel requested, does not stop the running input: it completes', async () => {
    const sessionId = 'forged';
    const first = heldReply({ text: 'finished all the same' });
    const store = new InstrumentedStore();
    const worker = await fleet.startWorker({ llm: new ScriptedLlm([first.step]), wrapStore: store.wrap, settings: LONG_LEASE });
    try {
      const handle = await queue.add('send', { sessionId, input: 'a long task' });
      await first.entered;
      expect(await fleet.redis.publish(cancelChannel(fleet.config.queueName), sessionId)).toBeGreaterThanOrEqual(1);
      // The worker has dealt with the message once it read the flag, or once the run ended (had it
      // acted on the message alone).
      await fleet.waitFor('the worker to deal with the message', async () =>
        store.count('readCancelRequest') > 0 || (await status(sessionId)) !== 'running' ? true : undefined,
      );
      first.release();
      await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'finished all the same' });
      expect((await fleet.store.getSession(sessionId))!.cancelRequestedAt).toBeNull();
    } finally {
      first.release();
      await worker.close();
    }
  });

  it('queue.cancel() (the durable request, then the message) still stops the running input at once', async () => {
    const sessionId = 'real';
    const first = heldReply({ text: 'never said' });
    const worker = await fleet.startWorker({ llm: new ScriptedLlm([first.step], { whenExhausted: 'echo' }), settings: LONG_LEASE });
    try {
      const handle = await queue.add('send', { sessionId, input: 'a long task' });
      await first.entered;
      expect(await queue.cancel(sessionId)).toBe(true);
      // Far below the 40 s between two periodic re-reads of the flag under this lease.
      await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'cancelled' });
      // The run that honoured the request consumed it: the next input runs.
      const next = await queue.add('send', { sessionId, input: 'next' });
      await expect(next.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Echo: next' });
    } finally {
      first.release();
      await worker.close();
    }
  });
});
