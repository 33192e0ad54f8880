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
