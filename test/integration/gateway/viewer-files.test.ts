import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import type { SessionQueue } from '../../../src/producer/session-queue.js';
import { gatewayConfig } from './gateway-fixture.js';

/** The viewer's files at `/`: served with client routes falling back to index.html; without a build, a 404 with a hint. */
describe('gateway viewer files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopfleet-viewer-'));
  // No request here reaches the queue.
  const queue = { queueName: 'viewer-test' } as SessionQueue;
  let built: FastifyInstance;
  let bare: FastifyInstance;

  beforeAll(async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>viewer</title>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    built = await buildGateway({ queue, config: gatewayConfig(), viewerDir: dir });
    bare = await buildGateway({ queue, config: gatewayConfig(), viewerDir: join(dir, 'missing') });
  });

  afterAll(async () => {
    await built?.close();
    await bare?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at / and for client routes, assets as files, without a token', async () => {
    const root = await built.inject({ url: '/' });
    expect([root.statusCode, root.body]).toEqual([200, '<!doctype html><title>viewer</title>']);
    expect((await built.inject({ url: '/assets/app.js' })).body).toBe('console.log(1)');
    const clientRoute = await built.inject({ url: '/sessions/demo' });
    expect(clientRoute.statusCode).toBe(200);
    expect(clientRoute.headers['content-type']).toContain('text/html');
  });

  it('keeps API and asset misses as JSON 404s', async () => {
    expect((await built.inject({ url: '/assets/missing.js' })).statusCode).toBe(404);
    const api = await built.inject({ url: '/v1/nothing', headers: {} });
    expect(api.statusCode).toBe(401);
  });

  it('answers / with 404 and a hint when the viewer is not built', async () => {
    const root = await bare.inject({ url: '/' });
    expect(root.statusCode).toBe(404);
    expect(root.json().error.message).toContain('npm run build');
  });
});
