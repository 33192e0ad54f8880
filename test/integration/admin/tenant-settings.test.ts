import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminFixture } from './admin-fixture.js';

/** Tenant settings through the queue, the gateway and the CLI (the contract covers the store). */
describe('tenant settings', () => {
  let fx: AdminFixture;

  beforeAll(async () => {
    fx = await AdminFixture.create('tenant_settings');
  });

  afterAll(async () => {
    await fx?.close();
  });

  it('writes the row the dispatch reads', async () => {
    await fx.queue.tenants.set('q-acme', { weight: 250, maxConcurrentInputs: 3 });
    await fx.queue.tenants.set('q-acme', { maxInputsPerSecond: 0.5 });
    const { rows } = await fx.pool.query(`SELECT weight, max_concurrent_inputs AS c, max_inputs_per_second AS r FROM tenant_settings WHERE tenant = 'q-acme'`);
    expect(rows).toEqual([{ weight: 250, c: 3, r: 0.5 }]);
    await expect(fx.queue.tenants.set('q-acme', { weight: 0 })).rejects.toMatchObject({ code: 'input.invalid', details: { field: 'weight' } });
  });

  describe('gateway', () => {
    it('lets an admin of every tenant change settings; a tenant admin reads its own only', async () => {
      const root = await fx.headers({ scope: 'admin' });
      const acme = await fx.headers({ tenant: 'gw-acme', scope: 'admin' });
      const put = await fx.app.inject({ method: 'PUT', url: '/v1/tenants/gw-acme', headers: root, payload: { weight: 50, maxConcurrentInputs: 2 } });
      expect(put.statusCode).toBe(200);
      expect(put.json()).toMatchObject({ tenant: 'gw-acme', weight: 50, maxConcurrentInputs: 2, maxInputsPerSecond: null, stored: true });
      expect((await fx.app.inject({ url: '/v1/tenants/gw-acme', headers: acme })).json()).toMatchObject({ weight: 50, stored: true });
      expect((await fx.app.inject({ method: 'PUT', url: '/v1/tenants/gw-acme', headers: acme, payload: { weight: 10_000 } })).statusCode).toBe(403);
      expect((await fx.app.inject({ url: '/v1/tenants/gw-globex', headers: acme })).statusCode).toBe(403);
      expect((await fx.app.inject({ url: '/v1/tenants/gw-acme', headers: await fx.headers({ tenant: 'gw-acme', scope: 'write' }) })).statusCode).toBe(403);
      expect((await fx.app.inject({ url: '/v1/tenants', headers: acme })).json().tenants.map((t: { tenant: string }) => t.tenant)).toEqual(['gw-acme']);
      const cleared = await fx.app.inject({ method: 'PUT', url: '/v1/tenants/gw-acme', headers: root, payload: { maxConcurrentInputs: null } });
      expect(cleared.json()).toMatchObject({ weight: 50, maxConcurrentInputs: null });
      expect((await fx.app.inject({ method: 'PUT', url: '/v1/tenants/gw-acme', headers: root, payload: { weight: 0 } })).statusCode).toBe(400);
      expect((await fx.app.inject({ method: 'DELETE', url: '/v1/tenants/gw-acme', headers: root })).statusCode).toBe(204);
      expect((await fx.app.inject({ url: '/v1/tenants/gw-acme', headers: acme })).json()).toMatchObject({ weight: 100, maxConcurrentInputs: null, stored: false });
    });
  });

  describe('CLI', () => {
    it('sets only what is given, gets, lists, deletes', async () => {
      expect((await fx.cli('tenant', 'set', 'cli-t', '--weight', '300', '--max-concurrent', '4')).code).toBe(0);
      const set = await fx.cli('tenant', 'set', 'cli-t', '--max-rate', '2.5', '--max-concurrent', 'none', '--json');
      expect(JSON.parse(set.out)).toMatchObject({ tenant: 'cli-t', weight: 300, maxConcurrentInputs: null, maxInputsPerSecond: 2.5 });
      const got = await fx.cli('tenant', 'get', 'cli-t');
      expect(got.out).toMatch(/^cli-t\s+300\s+-\s+2\.5\s/m);
      expect((await fx.cli('tenant', 'get', 'cli-none')).out).toContain('no settings of its own');
      expect((await fx.cli('tenant', 'list')).out).toContain('cli-t');
      expect(await fx.cli('tenant', 'delete', 'cli-t')).toMatchObject({ code: 0 });
      expect((await fx.cli('tenant', 'delete', 'cli-t')).code).toBe(3);
    });

    it('refuses a bad command line with exit 2', async () => {
      expect((await fx.cli('tenant', 'set', 'cli-t')).code).toBe(2);
      expect((await fx.cli('tenant', 'set', 'cli-t', '--weight', '0')).code).toBe(2);
      expect((await fx.cli('tenant', 'set', 'cli-t', '--max-rate', '-1')).code).toBe(2);
      expect((await fx.cli('tenant')).code).toBe(2);
    });
  });
});
