import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { RawProducer } from '../fleet/fixtures/raw-clients.js';

/**
 * Tenants end to end (docs/client.md): `sessions.create({ tenant })`, an add's `data.tenant` through
 * `SessionQueue` and the raw path, refusals that write nothing, and `sessions.list`.
 */
describe('session tenants and the session list', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  let producer: RawProducer;

  beforeAll(async () => {
    fleet = await FleetFixture.create('session_tenants');
    await fleet.startWorker({ agents: [{ name: 'default' }] });
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName, recheckMs: 60_000 });
    producer = await RawProducer.open(fleet.config.redisUrl, fleet.config.queueName);
  });

  afterAll(async () => {
    await producer?.close();
    await queue?.close();
    await fleet?.close();
  });

  async function rowCounts(): Promise<{ sessions: number; inputs: number }> {
    const result = await fleet.pool.query<{ sessions: number; inputs: number }>(
      'SELECT (SELECT count(*)::int FROM sessions) AS sessions, (SELECT count(*)::int FROM session_inputs) AS inputs',
    );
    return result.rows[0]!;
  }

  it('creates sessions for a tenant, by sessions.create and by the add that creates one', async () => {
    expect((await queue.sessions.create({ id: 'acme-created', tenant: 'acme' })).tenant).toBe('acme');
    await queue.add('send', { sessionId: 'acme-added', tenant: 'acme', input: 'hi' });
    expect((await queue.sessions.get('acme-added'))?.tenant).toBe('acme');
    await queue.add('send', { sessionId: 'acme-added', input: 'no tenant named: taken' });
    expect((await queue.sessions.get('acme-added'))?.nextSeq).toBe(2);
  });

  it('refuses an add naming another tenant with session.tenant_mismatch, writing nothing', async () => {
    await queue.sessions.create({ id: 'globex-1', tenant: 'globex' });
    const before = await rowCounts();
    await expect(queue.add('send', { sessionId: 'globex-1', tenant: 'acme', input: 'x' })).rejects.toMatchObject({ code: 'session.tenant_mismatch' });
    await expect(queue.add('resume', { sessionId: 'globex-1', tenant: 'acme' })).rejects.toMatchObject({ code: 'session.tenant_mismatch' });
    await expect(queue.add('send', { sessionId: 'globex-2', tenant: 'a b', input: 'x' })).rejects.toMatchObject({ code: 'input.invalid' });
    expect(await rowCounts()).toEqual(before);
  });

  it.each([
    ['a bad data.tenant', 'input.invalid', { sessionId: 'raw-bad-tenant', tenant: 'a/b', input: 'x' }],
    ["a data.tenant other than the session's", 'session.tenant_mismatch', { sessionId: 'raw-initech', tenant: 'acme', input: 'x' }],
  ] as const)('a raw send with %s fails once with "%s: …", nothing written', async (_label, code, data) => {
    await queue.add('send', { sessionId: 'raw-initech', tenant: 'initech', input: 'first' });
    const before = await rowCounts();
    const outcome = await producer.run('send', data, { attempts: 5, backoff: { type: 'fixed', delay: 50 } });
    expect(outcome.state).toBe('failed');
    expect(outcome.failedReason).toMatch(new RegExp(`^${code.replace('.', '\\.')}: `));
    expect(outcome.job.attemptsMade).toBe(1);
    expect(await rowCounts()).toEqual(before);
  });

  it('a raw send naming a tenant creates its session for it', async () => {
    const outcome = await producer.run('send', { sessionId: 'raw-hooli', tenant: 'hooli', input: 'x' });
    expect(outcome.value).toMatchObject({ seq: 1 });
    expect((await queue.sessions.get('raw-hooli'))?.tenant).toBe('hooli');
  });

  it("lists a tenant's sessions newest first, page by page", async () => {
    for (const id of ['list-1', 'list-2', 'list-3']) await queue.sessions.create({ id, tenant: 'lister' });
    const first = await queue.sessions.list({ tenant: 'lister', limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual(['list-3', 'list-2']);
    expect(first.sessions[0]).toMatchObject({ tenant: 'lister', agent: 'default', status: 'idle', inputs: 0, parentSessionId: null });
    const second = await queue.sessions.list({ tenant: 'lister', limit: 2, cursor: first.nextCursor! });
    expect(second).toMatchObject({ sessions: [{ id: 'list-1' }], nextCursor: null });
    expect((await queue.sessions.list({ idPrefix: 'list-' })).sessions).toHaveLength(3);
    await expect(queue.sessions.list({ cursor: 'nope' })).rejects.toMatchObject({ code: 'input.invalid' });
  });
});
