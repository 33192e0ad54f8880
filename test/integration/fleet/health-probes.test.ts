import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/** The worker's probes against its real Postgres pool and Redis client (the server itself: test/unit/worker/health-server.test.ts). */
describe('a worker’s health probes', () => {
  let fleet: FleetFixture;
  let worker: RunningWorker;

  beforeAll(async () => {
    fleet = await FleetFixture.create('health');
    worker = await fleet.startWorker({ healthServer: true });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('/readyz is 200 with Postgres and Redis answering, /healthz 200, and other methods 405', async () => {
    const base = `http://127.0.0.1:${String(worker.healthPort)}`;
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', postgres: 'ok', redis: 'ok' });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const posted = await fetch(`${base}/readyz`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });
});
