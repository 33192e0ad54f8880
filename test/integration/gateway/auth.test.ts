import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../../src/config/gateway-config.js';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import { bearer, gatewayConfig, GatewayFixture, token } from './gateway-fixture.js';

/** Auth, tenants, CORS, body and rate limits of the gateway, against a real fleet. */
describe('gateway auth and limits', () => {
  let gw: GatewayFixture;
  const extraApps: FastifyInstance[] = [];
  let jwks: Server | undefined;

  beforeAll(async () => {
    gw = await GatewayFixture.create('gateway_auth');
    const write = bearer(await token({ tenant: 'default', scope: 'write' }));
    await gw.app.inject({ method: 'POST', url: '/v1/sessions', headers: write, payload: { id: 'auth-default' } });
  });

  afterAll(async () => {
    for (const app of extraApps) await app.close();
    jwks?.close();
    await gw?.close();
  });

  /** Another gateway on the same fleet, with other settings. */
  const app = async (overrides: Parameters<typeof gatewayConfig>[0]): Promise<FastifyInstance> => {
    const built = await buildGateway({ queue: gw.queue, redis: gw.redis, config: gatewayConfig(overrides) });
    extraApps.push(built);
    return built;
  };

  const code = (response: { json(): { error: { code: string } } }) => response.json().error.code;

  it('refuses a missing, malformed, wrongly signed or expired token with 401 and its code', async () => {
    const missing = await gw.app.inject({ url: '/v1/me' });
    expect([missing.statusCode, code(missing)]).toEqual([401, 'auth.missing_token']);
    const basic = await gw.app.inject({ url: '/v1/me', headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect([basic.statusCode, code(basic)]).toEqual([401, 'auth.invalid_token']);
    const forged = await gw.app.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'admin' }, { secret: 'another-secret-that-is-32-bytes-long!!' })) });
    expect([forged.statusCode, code(forged)]).toEqual([401, 'auth.invalid_token']);
    const expired = await gw.app.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'read' }, { exp: Math.floor(Date.now() / 1000) - 60 })) });
    expect([expired.statusCode, code(expired)]).toEqual([401, 'auth.expired']);
    const noScope = await gw.app.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default' })) });
    expect([noScope.statusCode, code(noScope)]).toEqual([401, 'auth.invalid_token']);
    const noTenant = await gw.app.inject({ url: '/v1/me', headers: bearer(await token({ scope: 'write' })) });
    expect([noTenant.statusCode, code(noTenant)]).toEqual([401, 'auth.invalid_token']);
  });

  it('a read token may read but not post an input, cancel or delete: 403 auth.forbidden', async () => {
    const read = bearer(await token({ tenant: 'default', scope: 'read' }));
    expect((await gw.app.inject({ url: '/v1/sessions/auth-default', headers: read })).statusCode).toBe(200);
    const posted = await gw.app.inject({ method: 'POST', url: '/v1/sessions/auth-default/inputs', headers: read, payload: { input: 'hi' } });
    expect([posted.statusCode, code(posted)]).toEqual([403, 'auth.forbidden']);
    expect((await gw.app.inject({ method: 'POST', url: '/v1/sessions/auth-default/cancel', headers: read })).statusCode).toBe(403);
    expect((await gw.app.inject({ method: 'DELETE', url: '/v1/sessions/auth-default', headers: read })).statusCode).toBe(403);
    expect((await gw.app.inject({ method: 'POST', url: '/v1/sessions', headers: read, payload: {} })).statusCode).toBe(403);
    expect(await gw.queue.sessions.inputs('auth-default')).toEqual([]);
  });

  it("another tenant's session answers 404 session.not_found, to reads and writes alike", async () => {
    const other = bearer(await token({ tenant: 'other', scope: 'write' }));
    const view = await gw.app.inject({ url: '/v1/sessions/auth-default', headers: other });
    expect([view.statusCode, code(view)]).toEqual([404, 'session.not_found']);
    const history = await gw.app.inject({ url: '/v1/sessions/auth-default/history', headers: other });
    expect(history.statusCode).toBe(404);
    const posted = await gw.app.inject({ method: 'POST', url: '/v1/sessions/auth-default/inputs', headers: other, payload: { input: 'hi' } });
    expect([posted.statusCode, code(posted)]).toEqual([404, 'session.not_found']);
    expect((await gw.app.inject({ method: 'DELETE', url: '/v1/sessions/auth-default', headers: other })).statusCode).toBe(404);
    expect(await gw.queue.sessions.get('auth-default')).not.toBeNull();
    const created = await gw.app.inject({ method: 'POST', url: '/v1/sessions', headers: other, payload: { id: 'auth-x', tenant: 'default' } });
    expect([created.statusCode, code(created)]).toEqual([403, 'auth.forbidden']);
  });

  it('the sessions claim limits the ids a token may touch: 403 outside it', async () => {
    const scoped = bearer(await token({ tenant: 'default', scope: 'write', sessions: ['mine-*', 'exact-one'] }));
    expect((await gw.app.inject({ method: 'POST', url: '/v1/sessions', headers: scoped, payload: { id: 'mine-1' } })).statusCode).toBe(201);
    expect((await gw.app.inject({ url: '/v1/sessions/mine-1', headers: scoped })).statusCode).toBe(200);
    const outside = await gw.app.inject({ url: '/v1/sessions/auth-default', headers: scoped });
    expect([outside.statusCode, code(outside)]).toEqual([403, 'auth.forbidden']);
    const posted = await gw.app.inject({ method: 'POST', url: '/v1/sessions/exact-one-not/inputs', headers: scoped, payload: { input: 'hi' } });
    expect(posted.statusCode).toBe(403);
    const badClaim = await gw.app.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'read', sessions: 'mine-*' })) });
    expect(code(badClaim)).toBe('auth.invalid_token');
  });

  it('an admin token without a tenant sees every tenant', async () => {
    const admin = bearer(await token({ scope: 'admin' }));
    expect((await gw.app.inject({ url: '/v1/me', headers: admin })).json()).toMatchObject({ tenant: null, scope: 'admin' });
    expect((await gw.app.inject({ url: '/v1/sessions/auth-default', headers: admin })).statusCode).toBe(200);
  });

  it('checks issuer and audience when configured', async () => {
    const strict = await app({ auth: { mode: 'jwt', secret: gatewayConfig().auth.secret, jwksUrl: null, issuer: 'https://issuer.test', audience: 'loopfleet' } });
    const plain = await strict.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'read' })) });
    expect(plain.statusCode).toBe(401);
    const proper = await strict.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'read', iss: 'https://issuer.test', aud: 'loopfleet' })) });
    expect(proper.statusCode).toBe(200);
  });

  it('verifies tokens against a JWKS URL', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const stranger = await generateKeyPair('RS256');
    const jwk = Object.assign(await exportJWK(publicKey), { kid: 'k1', alg: 'RS256', use: 'sig' });
    jwks = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    const viaJwks = await app({ auth: { mode: 'jwt', secret: null, jwksUrl: url, issuer: null, audience: null } });
    const sign = (key: CryptoKey | Uint8Array) =>
      new SignJWT({ tenant: 'default', scope: 'read', sub: 'jwks-user' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setExpirationTime('5m').sign(key);
    const good = await viaJwks.inject({ url: '/v1/me', headers: bearer(await sign(privateKey)) });
    expect(good.json()).toMatchObject({ subject: 'jwks-user', scope: 'read' });
    const bad = await viaJwks.inject({ url: '/v1/me', headers: bearer(await sign(stranger.privateKey)) });
    expect([bad.statusCode, code(bad)]).toEqual([401, 'auth.invalid_token']);
    const hmac = await viaJwks.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'read' })) });
    expect(hmac.statusCode).toBe(401);
  });

  it('GATEWAY_AUTH=none is refused on a non-loopback host and serves everyone as admin on loopback', async () => {
    expect(() => loadGatewayConfig({ GATEWAY_HOST: '0.0.0.0' })).toThrow(/GATEWAY_AUTH: none is only allowed on a loopback/);
    expect(() => loadGatewayConfig({ GATEWAY_HOST: '10.0.0.5', GATEWAY_AUTH: 'none' })).toThrow(expect.objectContaining({ code: 'config.invalid' }));
    expect(loadGatewayConfig({ GATEWAY_HOST: '::1' }).gateway.auth.mode).toBe('none');
    expect(loadGatewayConfig({ GATEWAY_HOST: '0.0.0.0', GATEWAY_JWT_SECRET: 'x'.repeat(32) }).gateway.auth.mode).toBe('jwt');
    expect(() => loadGatewayConfig({ GATEWAY_JWT_SECRET: 'short' })).toThrow(/at least 32 bytes/);
    const open = await app({ auth: { mode: 'none', secret: null, jwksUrl: null, issuer: null, audience: null } });
    expect((await open.inject({ url: '/v1/me' })).json()).toEqual({ tenant: null, scope: 'admin', sessions: null, subject: null });
  });

  it('answers CORS for allowed origins only', async () => {
    const withCors = await app({ corsOrigins: ['http://allowed.example'] });
    const preflight = await withCors.inject({
      method: 'OPTIONS',
      url: '/v1/sessions',
      headers: { origin: 'http://allowed.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://allowed.example');
    const stranger = await withCors.inject({ method: 'OPTIONS', url: '/v1/sessions', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    const refused = await withCors.inject({ url: '/v1/me', headers: { origin: 'http://allowed.example' } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('http://allowed.example');
    const none = await gw.app.inject({ url: '/healthz', headers: { origin: 'http://allowed.example' } });
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers 413 input.too_large for a body over the limit', async () => {
    const small = await app({ bodyLimitBytes: 2048 });
    const write = bearer(await token({ tenant: 'default', scope: 'write' }));
    const big = await small.inject({ method: 'POST', url: '/v1/sessions/auth-big/inputs', headers: write, payload: { input: 'x'.repeat(4096) } });
    expect([big.statusCode, code(big)]).toEqual([413, 'input.too_large']);
    expect(await gw.queue.sessions.get('auth-big')).toBeNull();
  });

  it('answers 429 rate_limited with Retry-After once a caller is over its limit, counted across replicas', async () => {
    const [first, second] = [await app({ rateLimitPerMinute: 3 }), await app({ rateLimitPerMinute: 3 })];
    const read = bearer(await token({ tenant: 'default', scope: 'read', sub: 'rate-test' }));
    const statuses: number[] = [];
    for (const replica of [first, second, first]) statuses.push((await replica.inject({ url: '/v1/me', headers: read })).statusCode);
    const limited = await second.inject({ url: '/v1/me', headers: read });
    expect(statuses).toEqual([200, 200, 200]);
    expect([limited.statusCode, code(limited)]).toEqual([429, 'rate_limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const otherCaller = await first.inject({ url: '/v1/me', headers: bearer(await token({ tenant: 'default', scope: 'read', sub: 'someone-else' })) });
    expect(otherCaller.statusCode).toBe(200);
    expect((await first.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});
