import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../../src/core/ports/session-store.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { ChannelSubscriptions } from '../../../src/events/channel-subscriptions.js';
import { FinishNotices } from '../../../src/producer/finish-notices.js';
import { ResultTimeoutError } from '../../../src/producer/result-timeout-error.js';
import { waitForResult, type ResultDeps } from '../../../src/producer/wait-for-result.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { startTcpProxyTo, type TcpProxy } from '../../support/tcp-proxy.js';

/**
 * `result()`'s bounds hold from the call, not from its first reads (docs/client.md): a subscription
 * that a silent Redis holds, or a first Postgres read that never answers, does not delay the
 * timeout or the caller's abort; and a first Postgres read that fails is tried again, as every later
 * one is, instead of failing the wait.
 */
describe('result(): timeout and abort bound the first reads too', () => {
  let fleet: FleetFixture;
  let proxy: TcpProxy;
  let silentRedis: Redis;
  let channels: ChannelSubscriptions;
  let finishes: FinishNotices;
  const never = new Promise<never>(() => {});
  const closed = new AbortController();

  beforeAll(async () => {
    fleet = await FleetFixture.create('result_bounds');
    proxy = await startTcpProxyTo(fleet.config.redisUrl);
    silentRedis = new Redis(proxy.via(fleet.config.redisUrl), { maxRetriesPerRequest: null });
    // The proxy's cut resets it: without a listener ioredis prints the reset.
    silentRedis.on('error', () => {});
    await silentRedis.ping();
    channels = new ChannelSubscriptions(fleet.redis, null);
    finishes = new FinishNotices(channels, fleet.config.queueName);
  });

  afterAll(async () => {
    closed.abort();
    await channels?.close();
    silentRedis?.disconnect();
    await proxy?.close();
    await fleet?.close();
  });

  /** A pending input: accepted, never kicked, so nothing runs it. */
  async function pendingInput(sessionId: string): Promise<number> {
    return (await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'never run' }, maxBytes: fleet.config.worker.maxInputBytes })).seq;
  }

  function deps(overrides: Partial<ResultDeps>): ResultDeps {
    // Long enough that a wait held by either first read would outlast the test.
    return Object.assign({ store: fleet.store, finishes, recheckMs: 600_000, redisTimeoutMs: 600_000, logger: null, closed: closed.signal }, overrides);
  }

  it('times out on time while Redis holds the subscription', async () => {
    const seq = await pendingInput('subscription-held');
    // The notices' connection opens normally; its SUBSCRIBE never reaches Redis, nor any answer it.
    proxy.silenceWhen((chunk) => /subscribe/i.test(chunk.toString('latin1')));
    const heldChannels = new ChannelSubscriptions(silentRedis, null);
    const held = new FinishNotices(heldChannels, fleet.config.queueName);
    try {
      await expect(waitForResult(deps({ finishes: held }), 'subscription-held', seq, { timeoutMs: 200 })).rejects.toBeInstanceOf(ResultTimeoutError);
      expect(proxy.silenced()).toBe(1);
    } finally {
      proxy.silenceWhen(() => false);
      const closing = heldChannels.close();
      proxy.cut();
      await closing;
    }
  }, 20_000);

  it('rejects with the signal’s reason while the first Postgres read never answers, and when the queue closes', async () => {
    const seq = await pendingInput('read-held');
    const store = Object.assign(Object.create(fleet.store) as SessionStore, { getInput: () => never });
    const abort = new AbortController();
    const waiting = waitForResult(deps({ store }), 'read-held', seq, { signal: abort.signal });
    abort.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow('caller gave up');
    const queueClosing = new AbortController();
    const waitingOnClose = waitForResult(deps({ store, closed: queueClosing.signal }), 'read-held', seq);
    queueClosing.abort();
    await expect(waitingOnClose).rejects.toMatchObject({ code: 'cancelled' });
  }, 20_000);

  it('tries a failed first Postgres read again instead of failing the wait', async () => {
    await fleet.startWorker({ llm: new ScriptedLlm([], { whenExhausted: 'echo' }) });
    const { seq } = await acceptAndKick(fleet.acceptDeps, { sessionId: 'read-fails-once', kind: 'send', payload: { input: 'finished' } });
    await fleet.waitForSessionFinished('read-fails-once', 1);
    let failures = 0;
    const store = Object.assign(Object.create(fleet.store) as SessionStore, {
      getInput: (sessionId: string, inputSeq: number) => (failures++ === 0 ? Promise.reject(new Error('connection terminated unexpectedly')) : fleet.store.getInput(sessionId, inputSeq)),
    });
    await expect(waitForResult(deps({ store, recheckMs: 20 }), 'read-fails-once', seq, { timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Echo: finished' });
    expect(failures).toBeGreaterThan(1);
  }, 30_000);
});
