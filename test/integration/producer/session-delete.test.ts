import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventDeletedKey, eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { Gates, routingLlm } from './routing-llm.js';

interface Entry {
  type: string;
  data: { seq: number; inputSeq: number | null; text?: string; finalText?: string };
}

describe('sessions.delete while an input of the session runs', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  const gates = new Gates();

  beforeAll(async () => {
    fleet = await FleetFixture.create('session_delete');
    // A lease long enough that the heartbeat cannot notice the delete during the test: the old run
    // learns of it only at its next write, as it would between two renewals in production.
    await fleet.startWorker({ llm: routingLlm(gates), settings: { leaseTtlMs: 120_000 } });
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName, recheckMs: 60_000 });
  });

  afterAll(async () => {
    gates.openAll();
    await queue?.close();
    await fleet?.close();
  });

  async function stream(sessionId: string): Promise<Entry[]> {
    const entries = await fleet.redis.xrange(eventStreamKey(fleet.config.queueName, sessionId), '-', '+');
    return entries.map(([, fields]) => ({ type: fields[1]!, data: JSON.parse(fields[3]!) as Entry['data'] }));
  }

  it("a session created again under the id gets none of the deleted session's events, and its own input_finished", async () => {
    const sessionId = 'deleted-mid-run';
    const old = await queue.add('send', { sessionId, input: `hold:${sessionId}` });
    await fleet.waitFor('the old input to run', async () => ((await fleet.store.getInput(sessionId, old.seq))?.status === 'running' ? true : undefined));
    await fleet.waitFor('its input_started', async () => ((await stream(sessionId)).some((entry) => entry.type === 'input_started') ? true : undefined));

    expect(await queue.sessions.delete(sessionId)).toBe(true);
    expect(Number(await fleet.redis.get(eventDeletedKey(fleet.config.queueName, sessionId)))).toBeGreaterThan(0);
    // Created again by its first add; its input 1 waits behind the old drain, still in its model call.
    const again = await queue.add('send', { sessionId, input: 'again' });
    expect(again.seq).toBe(1);
    // The old run streams its reply now, into the stream of the new session, then fails to commit it.
    gates.open(sessionId);
    await expect(again.result({ timeoutMs: 30_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Echo: again' });

    const entries = await stream(sessionId);
    expect(entries.filter((entry) => (entry.data.text ?? entry.data.finalText ?? '').includes('held'))).toEqual([]);
    expect(entries.map((entry) => entry.data.seq)).toEqual(entries.map((_, i) => i + 1));
    expect(entries.filter((entry) => entry.type === 'input_finished')).toEqual([
      { type: 'input_finished', data: expect.objectContaining({ inputSeq: 1, finalText: 'Echo: again' }) },
    ]);
    expect(entries[0]).toMatchObject({ type: 'input_accepted', data: { inputSeq: 1 } });
    expect(await fleet.transcript(sessionId)).toEqual(['user: again', 'assistant: Echo: again']);
  });

  it("refuses a new session whose stream would be another session's key; one stored before the rule is still read and deleted", async () => {
    for (const id of ['a:seq', 'a:finished']) {
      await expect(queue.add('send', { sessionId: id, input: 'x' })).rejects.toMatchObject({ code: 'session.invalid_id', message: expect.stringContaining('must not end in') });
      await expect(queue.sessions.create({ id })).rejects.toMatchObject({ code: 'session.invalid_id' });
    }
    // The database's own check allows it, as it did before the rule.
    await fleet.pool.query(`INSERT INTO sessions (id) VALUES ('legacy:seq')`);
    expect(await queue.sessions.get('legacy:seq')).toMatchObject({ id: 'legacy:seq' });
    expect(await queue.stats('legacy:seq')).toMatchObject({ inputs: { total: 0 } });
    expect(await queue.sessions.delete('legacy:seq')).toBe(true);
  });
});
