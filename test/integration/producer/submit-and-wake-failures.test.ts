import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { createLogger } from '../../../src/observability/logger.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { PrivateRedis } from '../fleet/fixtures/private-redis.js';
import { Gates, routingLlm } from './routing-llm.js';

/**
 * What the client says when part of an add fails: an answer to a question the session is not waiting
 * on is refused with `interaction.not_pending` before anything is written; an input stored while
 * Redis is away comes back with `wakeQueued: false` instead of an error, and still runs.
 */
describe('SessionQueue: answers to no question, wake-ups without Redis (private redis-server)', () => {
  let redis: PrivateRedis;
  let fleet: FleetFixture;
  let queue: SessionQueue;
  const gates = new Gates();
  const warnings: Record<string, unknown>[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    fleet = await FleetFixture.create('producer_failures', { REDIS_URL: redis.url });
    await fleet.startWorker({ llm: routingLlm(gates), settings: { sweepEveryMs: 500, sweepGraceMs: 300 } });
    const logger = createLogger({
      level: 'warn',
      format: 'json',
      redactContent: true,
      destination: { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) },
    });
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: redis.url, queueName: fleet.config.queueName, redisTimeoutMs: 500, logger });
  });

  afterAll(async () => {
    gates.openAll();
    await queue?.close();
    await fleet?.close();
    await redis?.stop();
  });

  async function askedSession(sessionId: string): Promise<string> {
    const asked = await queue.add('send', { sessionId, input: 'ask:Which colour?' });
    await expect(asked.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'waiting_for_input' });
    const interaction = (await queue.sessions.get(sessionId))?.pending?.interactions[0];
    return interaction!.interactionId;
  }

  it('an add with Redis up has wakeQueued true', async () => {
    const handle = await queue.add('send', { sessionId: 'wake-up', input: 'hello' });
    expect(handle.wakeQueued).toBe(true);
    await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ finalText: 'Echo: hello' });
  });

  it('submitInput with an interaction id the session does not wait on: interaction.not_pending, nothing written', async () => {
    const interactionId = await askedSession('ask-wrong');
    await expect(queue.submitInput('ask-wrong', 'not-the-question', 'blue')).rejects.toMatchObject({
      code: 'interaction.not_pending',
      details: { sessionId: 'ask-wrong', interactionId: 'not-the-question', pending: [interactionId] },
    });
    expect(await fleet.store.listInputs('ask-wrong', { limit: 10 })).toHaveLength(1);
    // The right id is still taken, and a retry of it with the same inputId is the original (idempotent).
    const answered = await queue.submitInput('ask-wrong', interactionId, 'blue', { inputId: 'answer-1' });
    await expect(answered.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Got: blue' });
    await expect(queue.submitInput('ask-wrong', interactionId, 'blue', { inputId: 'answer-1' })).resolves.toMatchObject({ seq: answered.seq, duplicate: true });
    // Answered: nothing is pending any more.
    await expect(queue.submitInput('ask-wrong', interactionId, 'green')).rejects.toMatchObject({ code: 'interaction.not_pending', details: { pending: [] } });
  });

  it('submitInput to a session that never asked, or does not exist', async () => {
    await queue.add('send', { sessionId: 'never-asked', input: 'hi' }).then((handle) => handle.result({ timeoutMs: 20_000 }));
    await expect(queue.submitInput('never-asked', 'q1', 1)).rejects.toMatchObject({ code: 'interaction.not_pending' });
    await expect(queue.add('resume', { sessionId: 'never-asked', submit: { interactionId: 'q1', value: 1 } })).rejects.toMatchObject({ code: 'interaction.not_pending' });
    await expect(queue.submitInput('no-such-session', 'q1', 1)).rejects.toMatchObject({ code: 'session.not_found' });
    expect(await fleet.store.getSession('no-such-session')).toBeNull();
  });

  it('Redis stopped after the connect: the add returns wakeQueued false with a warning; the sweeper runs it once Redis is back', async () => {
    await redis.stop();
    try {
      const handle = await queue.add('send', { sessionId: 'wake-lost', input: 'stored anyway' });
      expect(handle).toMatchObject({ sessionId: 'wake-lost', seq: 1, duplicate: false, wakeQueued: false, eventId: null });
      expect(await fleet.store.getInput('wake-lost', 1)).toMatchObject({ inputId: handle.inputId, status: 'pending' });
      expect(warnings.some((line) => line.sessionId === 'wake-lost' && typeof line.msg === 'string' && /kick/.test(line.msg))).toBe(true);
    } finally {
      await redis.restart();
    }
    const inputs = await fleet.waitForSessionIdle('wake-lost', 1, 45_000);
    expect(inputs.map((input) => input.status)).toEqual(['done']);
  }, 90_000);
});
