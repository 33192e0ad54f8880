import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/producer/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

describe('fleet end to end (offline scripted model)', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('e2e');
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet.close();
  });

  it('runs inputs of several sessions, each in order, through the worker', async () => {
    const deps = { store: fleet.store, queue: fleet.queue, maxInputBytes: 1 << 20 };
    for (const sessionId of ['alpha', 'beta']) {
      for (const text of ['one', 'two', 'three']) {
        await acceptAndKick(deps, { sessionId, kind: 'send', payload: { input: `${sessionId} ${text}` } });
      }
    }
    for (const sessionId of ['alpha', 'beta']) {
      const inputs = await fleet.waitForSessionIdle(sessionId, 3);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.finalText])).toEqual([
        [1, 'done', `Echo: ${sessionId} one`],
        [2, 'done', `Echo: ${sessionId} two`],
        [3, 'done', `Echo: ${sessionId} three`],
      ]);
      const history = await fleet.store.loadHistory(sessionId);
      expect(history.map((row) => row.message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    }
  });
});

describe('fleet end to end: many drains at once in one worker', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('e2e_wide', { WORKER_CONCURRENCY: '32' });
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet.close();
  });

  it('runs 24 sessions side by side without a listener-leak warning on the shared shutdown signal', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const sessions = Array.from({ length: 24 }, (_, i) => `wide-${i}`);
      await Promise.all(sessions.map((sessionId) => acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: `hello ${sessionId}` } })));
      for (const sessionId of sessions) {
        const [input] = await fleet.waitForSessionIdle(sessionId, 1);
        expect(input?.result?.finalText).toBe(`Echo: hello ${sessionId}`);
      }
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
