import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamItem } from '../../../src/fleet/fleet-events.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { Gates, routingLlm } from './routing-llm.js';

/** The first `input_finished` of `seq` on a subscription, with the time it was read. */
async function finishedOf(items: AsyncIterable<StreamItem>, seq: number): Promise<{ status: unknown; at: number }> {
  for await (const item of items) {
    if (item.kind === 'event' && item.type === 'input_finished' && item.data.inputSeq === seq) return { status: item.data.status, at: performance.now() };
  }
  throw new Error('stream ended without input_finished');
}

describe('SessionQueue: cancel, submitInput, abortPending, validation, Redis outage', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  const gates = new Gates();

  beforeAll(async () => {
    fleet = await FleetFixture.create('producer_ctl');
    // Two workers: an answer may be picked up by either (the question lives in Postgres, not in a worker).
    await fleet.startWorker({ llm: routingLlm(gates) });
    await fleet.startWorker({ llm: routingLlm(gates) });
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
  });

  afterAll(async () => {
    gates.openAll();
    await queue?.close();
    await fleet?.close();
  });

  it('cancels a running input: it ends cancelled promptly', async () => {
    const handle = await queue.add('send', { sessionId: 'cancel-1', input: 'hold:never' });
    await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('cancel-1', 1))?.status === 'running' ? true : undefined));
    const controller = new AbortController();
    const finished = finishedOf(queue.subscribe('cancel-1', { after: '0', signal: controller.signal }), handle.seq);
    const started = performance.now();
    expect(await queue.cancel('cancel-1')).toBe(true);
    const { status, at } = await finished;
    controller.abort();
    const elapsedMs = at - started;
    console.info(`cancel → input_finished: ${elapsedMs.toFixed(1)} ms`);
    expect(status).toBe('cancelled');
    expect(elapsedMs).toBeLessThan(2000);
    await expect(handle.result({ timeoutMs: 10_000 })).resolves.toMatchObject({ status: 'cancelled' });
    expect((await fleet.store.getInput('cancel-1', 1))?.status).toBe('cancelled');
  });

  it('cancel of an unknown session returns false', async () => {
    expect(await queue.cancel('no-such-session')).toBe(false);
  });

  it('submitInput answers a request_user_input question and the session continues', async () => {
    const asked = await queue.add('send', { sessionId: 'ask-1', input: 'ask:Which colour?' });
    const waiting = await asked.result({ timeoutMs: 20_000 });
    expect(waiting.status).toBe('waiting_for_input');
    const session = await queue.sessions.get('ask-1');
    const interaction = session?.pending?.interactions[0];
    expect(interaction?.prompt).toBe('Which colour?');
    const answered = await queue.submitInput('ask-1', interaction!.interactionId, 'blue');
    await expect(answered.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Got: blue' });
    expect((await queue.sessions.get('ask-1'))?.pending).toBeNull();
  });

  it('abortPending closes the open question and completes', async () => {
    const asked = await queue.add('send', { sessionId: 'abort-1', input: 'ask:Proceed?' });
    await expect(asked.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'waiting_for_input' });
    const aborted = await queue.abortPending('abort-1', 'user left');
    await expect(aborted.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed' });
    const history = await queue.history('abort-1');
    const tool = history.find((row) => row.message.role === 'tool');
    expect(tool?.message.content).toBe('<aborted: user left>');
    expect((await queue.sessions.get('abort-1'))?.pending).toBeNull();
    const after = await queue.add('send', { sessionId: 'abort-1', input: 'still there?' });
    await expect(after.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ finalText: 'Echo: still there?' });
  });

  it('rejects invalid ids, kinds, modes and payloads with typed errors and writes nothing', async () => {
    const bad: [Promise<unknown>, string][] = [
      [queue.add('send', { sessionId: 'bad id!', input: 'x' }), 'session.invalid_id'],
      [queue.add('send', { sessionId: '', input: 'x' }), 'session.invalid_id'],
      [queue.add('timer' as never, { sessionId: 'v-1', input: 'x' }), 'input.invalid'],
      [queue.add('frobnicate' as never, { sessionId: 'v-1', input: 'x' }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1', input: 'x', mode: 'sideways' as never }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1', input: 'x' }, { mode: 'later' as never }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1', input: 'x', inputId: 'a' }, { inputId: 'b' }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1', input: 'x', inputId: 'has space' }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1' }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1', input: 'x', extra: 1 } as never), 'input.invalid'],
      [queue.add('resume', { sessionId: 'v-1', submit: { interactionId: 'i', value: 1 }, abortPending: { reason: 'r' } }), 'input.invalid'],
      [queue.add('send', { sessionId: 'v-1', input: 'x'.repeat(2 << 20) }), 'input.too_large'],
      [queue.add('send', null as never), 'input.invalid'],
      [queue.result('v-1', 0), 'input.invalid'],
      [queue.result('bad id!', 1), 'session.invalid_id'],
      [queue.history('bad id!'), 'session.invalid_id'],
      [queue.cancel('bad id!'), 'session.invalid_id'],
      [queue.sessions.get('bad id!'), 'session.invalid_id'],
      // What JavaScript callers may pass: typed errors, not TypeErrors.
      [queue.add('send', { sessionId: Object.create(null) as string, input: 'x' }), 'session.invalid_id'],
      [queue.history('v-1', null as never), 'input.invalid'],
      [queue.sessions.create(null as never), 'input.invalid'],
      // Past Node's timer range a timeout would fire at once.
      [queue.result('v-1', 1, { timeoutMs: 2 ** 31 }), 'input.invalid'],
    ];
    for (const [call, code] of bad) await expect(call).rejects.toMatchObject({ code });
    expect(() => queue.subscribe('bad id!')).toThrow(expect.objectContaining({ code: 'session.invalid_id' }));
    expect(() => queue.subscribe('v-1', { after: 'yesterday' })).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    expect(() => queue.subscribe('v-1', null as never)).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    expect(await fleet.store.getSession('v-1')).toBeNull();
  });

  it('accepts the input durably when Redis is unreachable, and still reads its result from Postgres', async () => {
    // Port 1 is closed: every Redis command queues while ioredis retries the connection.
    const deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true });
    deadRedis.on('error', () => {});
    const offline = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redis: deadRedis, queueName: fleet.config.queueName, redisTimeoutMs: 300, recheckMs: 100 });
    try {
      const handle = await offline.add('send', { sessionId: 'outage-1', input: 'durable' });
      expect(handle).toMatchObject({ sessionId: 'outage-1', seq: 1, duplicate: false });
      expect(await fleet.store.getInput('outage-1', 1)).toMatchObject({ inputId: handle.inputId, payload: { input: 'durable' } });
      // Never kicked: the sweeper finds the stranded inbox, and the result is read from Postgres alone.
      await expect(handle.result({ timeoutMs: 30_000 })).resolves.toMatchObject({ finalText: 'Echo: durable' });
      // The durable flag is set, but the live signal cannot be sent: the caller is told, not misled.
      await expect(offline.cancel('outage-1')).rejects.toMatchObject({ code: 'system.infrastructure' });
      expect((await fleet.store.getSession('outage-1'))?.cancelRequestedAt).toBeInstanceOf(Date);
    } finally {
      await offline.close();
      deadRedis.disconnect();
    }
  });

  it('refuses calls after close, and close is idempotent', async () => {
    const extra = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    const waiting = extra.result('cancel-1', 99).catch((error: unknown) => error);
    let seen = 0;
    const following = (async () => {
      for await (const item of extra.subscribe('cancel-1', { after: '0' })) if (item.kind === 'event') seen += 1;
    })();
    await fleet.waitFor('the subscription to read the stream', async () => (seen > 0 ? true : undefined));
    await Promise.all([extra.close(), extra.close()]);
    // The subscription, now blocked in XREAD, ends when the queue closes instead of waiting forever.
    await expect(following).resolves.toBeUndefined();
    expect(await waiting).toMatchObject({ code: expect.stringMatching(/^(input\.invalid|cancelled)$/) });
    await expect(extra.add('send', { sessionId: 'closed-1', input: 'x' })).rejects.toMatchObject({ code: 'state.conflict' });
  });
});
