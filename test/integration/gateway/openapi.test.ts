import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { gatewayConfig } from './gateway-fixture.js';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { summary?: string; responses?: Record<string, unknown> }>>;
}

/** `/v1/openapi.json` documents exactly the routes the gateway registers (CI check), with their methods. */
describe('gateway OpenAPI document', () => {
  let app: FastifyInstance;
  let queue: SessionQueue;
  let redis: Redis;
  const routes: RouteOptions[] = [];

  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1, lazyConnect: true });
    // No request reaches the store: the queue is only handed to the routes.
    queue = new SessionQueue({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres', redis, queueName: `openapi-${process.pid}` });
    app = await buildGateway({ queue, redis, config: gatewayConfig(), onRoute: (route) => routes.push(route) });
  });

  afterAll(async () => {
    await app?.close();
    await queue?.close();
    redis?.disconnect();
  });

  /** `METHOD /path/{param}` of every documented route: what the router serves and the document must list. */
  const registered = (): string[] => {
    const keys = new Set<string>();
    for (const route of routes) {
      const schema = route.schema as { hide?: boolean } | undefined;
      if (schema?.hide === true) continue;
      for (const method of [route.method].flat()) {
        // HEAD is Fastify's automatic twin of each GET; OPTIONS the CORS preflight.
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        keys.add(`${method} ${route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
      }
    }
    return [...keys].sort();
  };

  it('lists every registered route with its methods, and no path that is not served', async () => {
    const response = await app.inject({ url: '/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json() as OpenApiDocument;
    expect(document.openapi).toMatch(/^3\./);
    const documented = Object.entries(document.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(registered());
    for (const key of ['GET /v1/sessions', 'POST /v1/sessions/{id}/inputs', 'GET /v1/sessions/{id}/inputs/{seq}', 'GET /healthz']) expect(documented).toContain(key);
  });

  it('gives every operation a summary and its responses', async () => {
    const document = (await app.inject({ url: '/v1/openapi.json' })).json() as OpenApiDocument;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.summary, `${method} ${path}`).toBeTruthy();
        expect(Object.keys(operation.responses ?? {}).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
  });

  it('is served without a token', async () => {
    expect((await app.inject({ url: '/v1/openapi.json' })).headers['content-type']).toContain('application/json');
  });
});
