import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, GatewayFixture, token } from './gateway-fixture.js';

interface Listed {
  sessions: { id: string; tenant: string; agent: string; status: string; inputs: number; lastActivityAt: string }[];
  nextCursor: string | null;
}

/** Sessions belong to the token's tenant; listing is paged newest first and shows a caller only what it may see. */
describe('gateway tenants and session listing', () => {
  let gw: GatewayFixture;
  let acme: Record<string, string>;
  let globex: Record<string, string>;

  beforeAll(async () => {
    gw = await GatewayFixture.create('gateway_tenants');
    acme = bearer(await token({ tenant: 'acme', scope: 'write', sub: 'a' }));
    globex = bearer(await token({ tenant: 'globex', scope: 'write', sub: 'g' }));
    for (const id of ['acme-1', 'acme-2', 'acme-3', 'acme-4', 'acme-5']) {
      const created = await gw.app.inject({ method: 'POST', url: '/v1/sessions', headers: acme, payload: { id } });
      expect(created.json()).toMatchObject({ id, tenant: 'acme' });
    }
    const viaInput = await gw.app.inject({ method: 'POST', url: '/v1/sessions/globex-1/inputs', headers: globex, payload: { input: 'hi' } });
    expect(viaInput.statusCode).toBe(202);
  });

  afterAll(async () => {
    await gw?.close();
  });

  const list = async (query: string, headers: Record<string, string>): Promise<Listed> => {
    const response = await gw.app.inject({ url: `/v1/sessions${query}`, headers });
    expect(response.statusCode).toBe(200);
    return response.json() as Listed;
  };

  it('a session an input creates belongs to the token tenant; the other tenant gets 404', async () => {
    expect((await gw.queue.sessions.get('globex-1'))?.tenant).toBe('globex');
    const own = await gw.app.inject({ url: '/v1/sessions/globex-1', headers: globex });
    expect(own.json()).toMatchObject({ tenant: 'globex' });
    expect((await gw.app.inject({ url: '/v1/sessions/globex-1', headers: acme })).statusCode).toBe(404);
    const intruder = await gw.app.inject({ method: 'POST', url: '/v1/sessions/globex-1/inputs', headers: acme, payload: { input: 'hi' } });
    expect(intruder.json().error.code).toBe('session.not_found');
  });

  it('lists the token tenant only, newest first, a page at a time with nextCursor', async () => {
    const first = await list('?limit=2', acme);
    expect(first.sessions.map((session) => session.id)).toEqual(['acme-5', 'acme-4']);
    expect(first.sessions[0]).toMatchObject({ tenant: 'acme', agent: 'default', status: 'idle', inputs: 0 });
    expect(first.nextCursor).not.toBeNull();
    const second = await list(`?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`, acme);
    expect(second.sessions.map((session) => session.id)).toEqual(['acme-3', 'acme-2']);
    const last = await list(`?limit=2&cursor=${encodeURIComponent(second.nextCursor!)}`, acme);
    expect(last.sessions.map((session) => session.id)).toEqual(['acme-1']);
    expect(last.nextCursor).toBeNull();
    expect((await list('', globex)).sessions.map((session) => session.id)).toEqual(['globex-1']);
    const badCursor = await gw.app.inject({ url: '/v1/sessions?cursor=nonsense', headers: acme });
    expect([badCursor.statusCode, badCursor.json().error.code]).toEqual([400, 'input.invalid']);
    const badLimit = await gw.app.inject({ url: '/v1/sessions?limit=500', headers: acme });
    expect(badLimit.statusCode).toBe(400);
  });

  it('filters by prefix and status; naming another tenant is 403; admin lists any tenant', async () => {
    expect((await list('?prefix=acme-3', acme)).sessions.map((session) => session.id)).toEqual(['acme-3']);
    expect((await list('?status=running', acme)).sessions).toEqual([]);
    const foreign = await gw.app.inject({ url: '/v1/sessions?tenant=globex', headers: acme });
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([403, 'auth.forbidden']);
    const admin = bearer(await token({ scope: 'admin' }));
    expect((await list('?tenant=globex', admin)).sessions.map((session) => session.id)).toEqual(['globex-1']);
    expect((await list('', admin)).sessions).toHaveLength(6);
  });

  it("applies the token's sessions claim: one pattern as a prefix, several by filtering", async () => {
    const one = bearer(await token({ tenant: 'acme', scope: 'read', sessions: ['acme-2*'] }));
    expect((await list('', one)).sessions.map((session) => session.id)).toEqual(['acme-2']);
    expect((await list('?prefix=acme-3', one)).sessions).toEqual([]);
    const several = bearer(await token({ tenant: 'acme', scope: 'read', sessions: ['acme-1', 'acme-4'] }));
    expect((await list('', several)).sessions.map((session) => session.id)).toEqual(['acme-4', 'acme-1']);
  });
});
