import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishChannel } from '../../../src/fleet/fleet-keys.js';
import { bearer, GatewayFixture, token } from './gateway-fixture.js';

/**
 * Every REST route against a real fleet (Postgres, Redis, a worker): what it answers, and its errors.
 * Tokens here are of the default tenant; tenant isolation and the other auth refusals are in auth.test.ts.
 */
describe('gateway REST routes', () => {
  let gw: GatewayFixture;
  let write: Record<string, string>;
  let read: Record<string, string>;

  beforeAll(async () => {
    gw = await GatewayFixture.create('gateway_rest');
    write = bearer(await token({ tenant: 'default', scope: 'write', sub: 'writer' }));
    read = bearer(await token({ tenant: 'default', scope: 'read', sub: 'reader' }));
  });

  afterAll(async () => {
    await gw?.close();
  });

  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
    gw.app.inject(payload === undefined ? { method, url, headers } : { method, url, headers, payload: payload as object });

  it('serves /healthz, /readyz and /metrics without a token', async () => {
    expect((await inject('GET', '/healthz', {})).json()).toEqual({ status: 'ok' });
    const ready = await inject('GET', '/readyz', {});
    expect(ready.statusCode).toBe(200);
    const metrics = await inject('GET', '/metrics', {});
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('loopfleet_gateway_http_requests_total');
    expect(metrics.body).toContain('loopfleet_gateway_sse_clients');
  });

  it('GET /v1/me answers the token', async () => {
    const me = await inject('GET', '/v1/me', read);
    expect(me.json()).toEqual({ tenant: 'default', scope: 'read', sessions: null, subject: 'reader' });
  });

  it('creates a session (201), refuses the same id (409), reads it and deletes it (204, then 404)', async () => {
    const created = await inject('POST', '/v1/sessions', write, { id: 'rest-create', systemPrompt: 'Be brief.', metadata: { team: 'a' } });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ id: 'rest-create', tenant: 'default', agent: 'default', status: 'idle', systemPrompt: 'Be brief.', metadata: { team: 'a' }, depth: 0, children: [] });
    expect(created.json().inputs).toMatchObject({ total: 0 });
    const again = await inject('POST', '/v1/sessions', write, { id: 'rest-create' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('session.exists');
    const view = await inject('GET', '/v1/sessions/rest-create', read);
    expect(view.statusCode).toBe(200);
    expect(view.json()).toMatchObject({ id: 'rest-create', lease: { owner: null }, eventCursor: '0' });
    expect((await inject('DELETE', '/v1/sessions/rest-create', write)).statusCode).toBe(204);
    const gone = await inject('GET', '/v1/sessions/rest-create', read);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: { code: 'session.not_found', message: 'session rest-create does not exist', details: { sessionId: 'rest-create' } } });
    expect((await inject('DELETE', '/v1/sessions/rest-create', write)).statusCode).toBe(404);
  });

  it('creates a session with a random id when none is given', async () => {
    const created = await inject('POST', '/v1/sessions', write, {});
    expect(created.statusCode).toBe(201);
    expect(created.json().id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('validates bodies and ids: 400 input.invalid / session.invalid_id', async () => {
    const unknownField = await inject('POST', '/v1/sessions', write, { id: 'x', colour: 'red' });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json().error.code).toBe('input.invalid');
    const badId = await inject('GET', '/v1/sessions/bad%20id', read);
    expect(badId.statusCode).toBe(400);
    expect(badId.json().error.code).toBe('session.invalid_id');
    const badJson = await gw.app.inject({ method: 'POST', url: '/v1/sessions', headers: Object.assign({ 'content-type': 'application/json' }, write), payload: '{' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error.code).toBe('input.invalid');
  });

  it('accepts an input (202), creating the session; the same Idempotency-Key answers the same seq', async () => {
    const headers = Object.assign({ 'idempotency-key': 'key-1' }, write);
    const first = await inject('POST', '/v1/sessions/rest-input/inputs', headers, { input: 'hello' });
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ sessionId: 'rest-input', seq: 1, inputId: 'key-1', duplicate: false, wakeQueued: true });
    expect(first.json().eventId).toMatch(/^\d+-\d+$/);
    const again = await inject('POST', '/v1/sessions/rest-input/inputs', headers, { input: 'hello' });
    expect(again.json()).toMatchObject({ seq: 1, inputId: 'key-1', duplicate: true, eventId: null });
    const clash = await inject('POST', '/v1/sessions/rest-input/inputs', headers, { input: 'hello', inputId: 'other' });
    expect(clash.statusCode).toBe(400);
    expect(clash.json().error.code).toBe('input.invalid');
    const done = await inject('GET', '/v1/sessions/rest-input/inputs/1?wait=20s', read);
    expect(done.json()).toMatchObject({ seq: 1, status: 'done', result: { finalText: 'Echo: hello' } });
  });

  it('long-polls an input: answers when it finishes, or its running record when the wait ends', async () => {
    await inject('POST', '/v1/sessions/rest-poll/inputs', write, { input: 'hold:poll' });
    const timedOut = await inject('GET', '/v1/sessions/rest-poll/inputs/1?wait=300ms', read);
    expect(timedOut.statusCode).toBe(200);
    expect(['pending', 'running']).toContain(timedOut.json().status);
    const waiting = inject('GET', '/v1/sessions/rest-poll/inputs/1?wait=20s', read);
    await gw.fleet.waitFor('the run to start', async () => ((await gw.fleet.store.getInput('rest-poll', 1))?.status === 'running' ? true : undefined));
    gw.gates.open('poll');
    const finished = await waiting;
    expect(finished.json()).toMatchObject({ status: 'done', result: { finalText: 'held poll' } });
    const tooLong = await inject('GET', '/v1/sessions/rest-poll/inputs/1?wait=2m', read);
    expect(tooLong.statusCode).toBe(400);
    const malformed = await inject('GET', '/v1/sessions/rest-poll/inputs/1?wait=soon', read);
    expect(malformed.json().error.code).toBe('input.invalid');
    const noSuchInput = await inject('GET', '/v1/sessions/rest-poll/inputs/9', read);
    expect(noSuchInput.statusCode).toBe(404);
    expect(noSuchInput.json().error.code).toBe('input.not_found');
  });

  it('ends a long-poll at once when its client leaves, leaving no wait behind', async () => {
    await inject('POST', '/v1/sessions/rest-leave/inputs', write, { input: 'hold:leave' });
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const channel = finishChannel(gw.queue.queueName, 'rest-leave');
    const waiters = async (): Promise<number> => ((await gw.redis.pubsub('NUMSUB', channel)) as [string, number])[1];
    const client = new AbortController();
    const polling = fetch(`${address}/v1/sessions/rest-leave/inputs/1?wait=50s`, { headers: read, signal: client.signal }).catch(() => 'aborted');
    await gw.fleet.waitFor('the wait to subscribe', async () => ((await waiters()) > 0 ? true : undefined));
    client.abort();
    expect(await polling).toBe('aborted');
    await gw.fleet.waitFor('the wait to end', async () => ((await waiters()) === 0 ? true : undefined), 5_000);
    gw.gates.open('leave');
  });

  it('lists inputs, history (paged), stats, children, timers and agents', async () => {
    await inject('POST', '/v1/sessions/rest-reads/inputs', write, { input: 'one' });
    await inject('POST', '/v1/sessions/rest-reads/inputs', write, { input: 'two' });
    await gw.fleet.waitForSessionIdle('rest-reads', 2);
    const inputs = await inject('GET', '/v1/sessions/rest-reads/inputs?status=done', read);
    expect(inputs.json().inputs.map((input: { seq: number }) => input.seq)).toEqual([1, 2]);
    const afterOne = await inject('GET', '/v1/sessions/rest-reads/inputs?afterSeq=1&limit=5', read);
    expect(afterOne.json().inputs.map((input: { seq: number }) => input.seq)).toEqual([2]);
    const page = await inject('GET', '/v1/sessions/rest-reads/history?limit=2', read);
    expect(page.json().messages).toHaveLength(2);
    expect(page.json().nextAfterSeq).toBe(page.json().messages[1].seq);
    const rest = await inject('GET', `/v1/sessions/rest-reads/history?afterSeq=${page.json().nextAfterSeq}`, read);
    expect(rest.json()).toMatchObject({ nextAfterSeq: null });
    expect(rest.json().messages.map((message: { message: { role: string } }) => message.message.role)).toEqual(['user', 'assistant']);
    const stats = await inject('GET', '/v1/sessions/rest-reads/stats', read);
    expect(stats.json()).toMatchObject({ sessionId: 'rest-reads', inputs: { done: 2, total: 2 }, totals: { inputs: 2 } });
    expect((await inject('GET', '/v1/sessions/rest-reads/children', read)).json()).toEqual({ children: [] });
    await gw.queue.timers.schedule('rest-reads', { delayMs: 3_600_000, note: 'later' });
    const timers = await inject('GET', '/v1/sessions/rest-reads/timers', read);
    expect(timers.json().timers).toMatchObject([{ note: 'later', status: 'armed' }]);
    const view = await inject('GET', '/v1/sessions/rest-reads', read);
    expect(view.json()).toMatchObject({ inputs: { done: 2 }, stats: { inputs: 2 } });
    expect(view.json().eventCursor).toMatch(/^\d+-\d+$/);
    const agents = await inject('GET', '/v1/agents', read);
    expect(agents.json().agents.map((agent: { name: string }) => agent.name)).toContain('default');
    expect((await inject('GET', '/v1/sessions/nobody/history', read)).statusCode).toBe(404);
  });

  it('cancels a running input (202) and answers 404 for no session', async () => {
    await inject('POST', '/v1/sessions/rest-cancel/inputs', write, { input: 'hold:never' });
    await gw.fleet.waitFor('the run to start', async () => ((await gw.fleet.store.getInput('rest-cancel', 1))?.status === 'running' ? true : undefined));
    const cancelled = await inject('POST', '/v1/sessions/rest-cancel/cancel', write);
    expect(cancelled.statusCode).toBe(202);
    expect(cancelled.json()).toEqual({ cancelled: true });
    const outcome = await inject('GET', '/v1/sessions/rest-cancel/inputs/1?wait=20s', read);
    expect(outcome.json().status).toBe('cancelled');
    expect((await inject('POST', '/v1/sessions/nobody/cancel', write)).statusCode).toBe(404);
  });

  it('answers a question with submit (202), and its answer runs', async () => {
    await inject('POST', '/v1/sessions/rest-ask/inputs', write, { input: 'ask:Which colour?' });
    const asked = await inject('GET', '/v1/sessions/rest-ask/inputs/1?wait=20s', read);
    expect(asked.json().result.status).toBe('waiting_for_input');
    const view = (await inject('GET', '/v1/sessions/rest-ask', read)).json();
    expect(view.status).toBe('waiting_for_input');
    const interactionId = view.pending.interactionId ?? view.pending.interactions?.[0]?.interactionId;
    expect(typeof interactionId).toBe('string');
    const submitted = await inject('POST', '/v1/sessions/rest-ask/submit', write, { interactionId, value: 'blue' });
    expect(submitted.statusCode).toBe(202);
    const answered = await inject('GET', `/v1/sessions/rest-ask/inputs/${submitted.json().seq}?wait=20s`, read);
    expect(answered.json()).toMatchObject({ status: 'done', result: { finalText: 'Got: blue' } });
  });

  it('answers 404 route.not_found for an unknown path, as JSON', async () => {
    const missing = await inject('GET', '/v1/nothing-here', read);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('route.not_found');
  });
});
