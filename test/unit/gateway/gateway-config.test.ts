import { describe, expect, it } from 'vitest';
import { isLoopback, loadGatewayConfig } from '../../../src/config/gateway-config.js';
import { AuthForbiddenError, InputTooLargeError, SessionTenantMismatchError } from '../../../src/core/errors/index.js';
import { RateLimitedError, toErrorBody } from '../../../src/gateway/errors.js';
import { parseWait } from '../../../src/gateway/wait-duration.js';

describe('gateway configuration', () => {
  it('takes the defaults: 127.0.0.1:8080, no auth, no CORS, 600 a minute, the body limit above the input limit', () => {
    const { gateway } = loadGatewayConfig({});
    expect(gateway).toEqual({
      port: 8080,
      host: '127.0.0.1',
      auth: { mode: 'none', secret: null, jwksUrl: null, issuer: null, audience: null },
      corsOrigins: [],
      rateLimitPerMinute: 600,
      bodyLimitBytes: 1_048_576 + 65_536,
      sseHeartbeatMs: 15_000,
      maxWaitMs: 60_000,
    });
    expect(loadGatewayConfig({ LOOPFLEET_MAX_INPUT_BYTES: '1000' }).gateway.bodyLimitBytes).toBe(1000 + 65_536);
  });

  it('infers jwt from a secret or JWKS URL, and reads every setting', () => {
    const { gateway } = loadGatewayConfig({
      GATEWAY_HOST: '0.0.0.0',
      GATEWAY_PORT: '9000',
      GATEWAY_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
      GATEWAY_JWT_ISSUER: 'https://id.example.com',
      GATEWAY_JWT_AUDIENCE: 'loopfleet',
      GATEWAY_CORS_ORIGINS: ' https://a.example , https://b.example ',
      GATEWAY_RATE_LIMIT: '60',
      GATEWAY_BODY_LIMIT_BYTES: '4096',
      GATEWAY_SSE_HEARTBEAT_MS: '5000',
      GATEWAY_MAX_WAIT_MS: '1000',
    });
    expect(gateway).toMatchObject({
      port: 9000,
      auth: { mode: 'jwt', jwksUrl: 'https://id.example.com/.well-known/jwks.json', issuer: 'https://id.example.com', audience: 'loopfleet' },
      corsOrigins: ['https://a.example', 'https://b.example'],
      rateLimitPerMinute: 60,
      bodyLimitBytes: 4096,
      sseHeartbeatMs: 5000,
      maxWaitMs: 1000,
    });
  });

  it('refuses bad values with config.invalid naming the variable', () => {
    const refused = (env: Record<string, string>, variable: string) => {
      try {
        loadGatewayConfig(env);
      } catch (error) {
        expect(error).toMatchObject({ code: 'config.invalid', details: { variables: expect.arrayContaining([variable]) } });
        return;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    refused({ GATEWAY_PORT: '70000' }, 'GATEWAY_PORT');
    refused({ GATEWAY_AUTH: 'basic' }, 'GATEWAY_AUTH');
    refused({ GATEWAY_AUTH: 'jwt' }, 'GATEWAY_AUTH');
    refused({ GATEWAY_HOST: '192.168.1.4' }, 'GATEWAY_AUTH');
    refused({ GATEWAY_JWT_SECRET: 'too-short' }, 'GATEWAY_JWT_SECRET');
    refused({ GATEWAY_JWT_SECRET: 'x'.repeat(32), GATEWAY_JWKS_URL: 'https://id.example.com/jwks' }, 'GATEWAY_JWKS_URL');
    refused({ GATEWAY_JWKS_URL: 'ftp://id.example.com/jwks' }, 'GATEWAY_JWKS_URL');
    refused({ GATEWAY_RATE_LIMIT: '0' }, 'GATEWAY_RATE_LIMIT');
  });

  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) expect(isLoopback(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) expect(isLoopback(host)).toBe(false);
  });
});

describe('gateway errors and waits', () => {
  it('maps codes to statuses and hides what is not typed', () => {
    expect(toErrorBody(new InputTooLargeError('big')).status).toBe(413);
    expect(toErrorBody(new AuthForbiddenError('no')).status).toBe(403);
    expect(toErrorBody(new SessionTenantMismatchError('other')).status).toBe(409);
    expect(toErrorBody(new RateLimitedError('slow down'))).toEqual({ status: 429, body: { error: { code: 'rate_limited', message: 'slow down' } } });
    expect(toErrorBody(new Error('password=hunter2'))).toEqual({ status: 500, body: { error: { code: 'internal', message: 'internal error' } } });
    expect(toErrorBody(Object.assign(new Error('body too big'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 })).body.error.code).toBe('input.too_large');
  });

  it('parses ?wait= durations up to the cap', () => {
    expect(parseWait('30s', 60_000)).toBe(30_000);
    expect(parseWait('250ms', 60_000)).toBe(250);
    expect(parseWait('1m', 60_000)).toBe(60_000);
    expect(parseWait('5', 60_000)).toBe(5000);
    expect(() => parseWait('2m', 60_000)).toThrow(/at most 60000/);
    expect(() => parseWait('-1s', 60_000)).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    expect(() => parseWait('1h', 60_000)).toThrow(expect.objectContaining({ code: 'input.invalid' }));
  });
});
