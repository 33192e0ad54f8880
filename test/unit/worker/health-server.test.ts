import { afterEach, describe, expect, it } from 'vitest';
import { dependencyChecks, startHealthServer, type HealthChecks } from '../../../src/worker/health-server.js';

/** A dependency that never answers, like `redis.ping()` while Redis is down (it waits in the offline queue). */
const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('dependencyChecks', () => {
  it('reports a check that does not answer in time as timed out, the others as they answered', async () => {
    const check = dependencyChecks({ postgres: async () => 1, redis: never, broken: () => Promise.reject(new Error('refused')) }, 20);
    await expect(check()).resolves.toEqual({
      ok: false,
      detail: { postgres: 'ok', redis: 'timed out after 20 ms', broken: 'Error: refused' },
    });
  });

  it('is ok when every check answers', async () => {
    await expect(dependencyChecks({ postgres: async () => 1, redis: async () => 'PONG' }, 20)()).resolves.toEqual({
      ok: true,
      detail: { postgres: 'ok', redis: 'ok' },
    });
  });

  it('joins a check still running instead of starting it again, and starts a new one once it settled', async () => {
    let calls = 0;
    let answer = (): void => undefined;
    // A clock that stands still: however slow the machine, the running check never goes stale here.
    const check = dependencyChecks(
      {
        redis: () => {
          calls += 1;
          return new Promise<void>((resolve) => (answer = resolve));
        },
      },
      20,
      () => 0,
    );
    const [first, second] = await Promise.all([check(), check()]);
    const third = await check();
    expect([first.ok, second.ok, third.ok, calls]).toEqual([false, false, false, 1]);
    answer();
    await new Promise((resolve) => setImmediate(resolve)); // lets the settled check leave the running set
    await expect(check()).resolves.toEqual({ ok: false, detail: { redis: 'timed out after 20 ms' } });
    expect(calls).toBe(2);
  });

  it('gives up on a check still running after five timeouts, so a recovery is seen', async () => {
    let clock = 0;
    const answers = [never, async () => 'PONG'];
    const check = dependencyChecks({ redis: () => answers.shift()!() }, 20, () => clock);
    await expect(check()).resolves.toMatchObject({ ok: false });
    clock = 99;
    await expect(check()).resolves.toMatchObject({ ok: false });
    clock = 100;
    await expect(check()).resolves.toEqual({ ok: true, detail: { redis: 'ok' } });
  });
});

describe('startHealthServer', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function serve(checks: Partial<HealthChecks> = {}): Promise<string> {
    const server = await startHealthServer(0, { accepting: () => true, dependencies: async () => ({ ok: true, detail: {} }), ...checks });
    close = server.close;
    return `http://127.0.0.1:${server.port}`;
  }

  it('answers /readyz with 503 naming the dependency that did not answer in time', async () => {
    const base = await serve({ dependencies: dependencyChecks({ postgres: async () => 1, redis: never }, 20) });
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', postgres: 'ok', redis: 'timed out after 20 ms' });
  });

  it.each([
    ['DELETE', '/healthz'],
    ['POST', '/healthz?x=1'],
    ['PUT', '/readyz'],
    ['PATCH', '/metrics'],
  ])('answers %s %s with 405 and allow: GET, HEAD', async (method, path) => {
    const base = await serve({ metrics: async () => ({ contentType: 'text/plain', body: '' }) });
    const response = await fetch(`${base}${path}`, { method });
    expect([response.status, response.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(await response.json()).toEqual({ error: 'method not allowed' });
  });

  it('answers HEAD with the status and headers of GET, without a body', async () => {
    const base = await serve({ dependencies: async () => ({ ok: false, detail: { redis: 'down' } }) });
    const [healthz, readyz] = await Promise.all([fetch(`${base}/healthz`, { method: 'HEAD' }), fetch(`${base}/readyz`, { method: 'HEAD' })]);
    expect([healthz.status, readyz.status]).toEqual([200, 503]);
    expect(healthz.headers.get('content-type')).toBe('application/json');
    expect(await healthz.text()).toBe('');
  });

  it('answers unknown paths, and /metrics when metrics are not wired, with 404 whatever the method', async () => {
    const base = await serve();
    const statuses = await Promise.all([
      fetch(`${base}/nope`).then((r) => r.status),
      fetch(`${base}/nope`, { method: 'DELETE' }).then((r) => r.status),
      fetch(`${base}/metrics`, { method: 'POST' }).then((r) => r.status),
    ]);
    expect(statuses).toEqual([404, 404, 404]);
  });
});
