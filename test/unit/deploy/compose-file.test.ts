import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES } from '../../../src/config/env-schema.js';
import { KEY_FILE_VARIABLES } from '../../../src/config/key-files.js';
import { GATEWAY_VARIABLES } from '../../../src/config/gateway-config.js';
import { WORKER_NODE_FLAGS } from '../../../src/worker/young-generation.js';

/**
 * No Docker engine runs here, so the compose file's structure is checked instead of run: the
 * properties that make `docker compose up --scale worker=N` work (issue 5, item 10).
 */
const root = new URL('../../../', import.meta.url);
// `merge`: resolve the `<<: *loopfleet-env` merge key as docker compose does.
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true }) as {
  services: Record<string, Record<string, unknown>>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string }>;
};
const services = compose.services;

describe('docker-compose.yml', () => {
  it('has Postgres with a volume, Redis with AOF and noeviction, a one-shot migrate, a worker, a gateway, and Prometheus, Alertmanager and Grafana', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['alertmanager', 'gateway', 'grafana', 'jaeger', 'migrate', 'postgres', 'prometheus', 'redis', 'worker']));
    expect(services.postgres!.volumes).toEqual(['postgres-data:/var/lib/postgresql/data']);
    expect(Object.keys(compose.volumes ?? {})).toContain('postgres-data');
    const redisCommand = (services.redis!.command as string[]).join(' ');
    expect(redisCommand).toContain('--appendonly yes');
    expect(redisCommand).toContain('--maxmemory-policy noeviction');
    expect(services.migrate!.command).toEqual(['migrate']);
    expect(services.migrate!.restart).toBe('no');
  });

  it('publishes Prometheus and Alertmanager on this machine only unless MONITORING_BIND says otherwise', () => {
    expect(services.prometheus!.ports).toEqual(['${MONITORING_BIND:-127.0.0.1}:${PROMETHEUS_PORT:-9090}:9090']);
    expect(services.alertmanager!.ports).toEqual(['${MONITORING_BIND:-127.0.0.1}:${ALERTMANAGER_PORT:-9093}:9093']);
  });

  it('lets the worker scale: no container name, no host ports', () => {
    const worker = services.worker!;
    expect(worker.command).toEqual(['worker']);
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    expect(worker.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
  });

  it('gives the worker the configuration its services need', () => {
    const env = services.worker!.environment as Record<string, string>;
    expect(env.DATABASE_URL).toBe('postgres://postgres:postgres@postgres:5432/loopfleet');
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    expect(env.METRICS_PORT).toBe('9464');
    // Overridable (`WORKER_NODE_OPTIONS`), and the node flags `npm run fleet` starts a worker with by default.
    expect(env.NODE_OPTIONS).toBe(`\${WORKER_NODE_OPTIONS:-${WORKER_NODE_FLAGS.join(' ')}}`);
  });

  it('forwards every other setting from the shell, empty (the default) when it is unset', () => {
    const env = services.worker!.environment as Record<string, string>;
    // The keys themselves go through files (compose secrets), checked below.
    const fixed = ['DATABASE_URL', 'REDIS_URL', 'METRICS_PORT', ...Object.keys(KEY_FILE_VARIABLES), ...Object.values(KEY_FILE_VARIABLES)];
    const missing = CONFIG_VARIABLES.filter((name) => !fixed.includes(name) && !new RegExp(`^\\$\\{${name}:-[^}]*\\}$`).test(env[name] ?? ''));
    expect(missing).toEqual([]);
  });

  it('runs the gateway from the same image on all interfaces, published on this machine, with every GATEWAY_ setting forwarded', () => {
    const gateway = services.gateway!;
    expect(gateway.command).toEqual(['gateway']);
    expect(gateway.build).toEqual(services.worker!.build);
    expect(gateway.ports).toEqual(['${GATEWAY_BIND:-127.0.0.1}:${GATEWAY_PUBLISH_PORT:-8080}:8080']);
    expect(JSON.stringify(gateway.healthcheck)).toContain('/healthz');
    const env = gateway.environment as Record<string, string>;
    expect(env.GATEWAY_HOST).toBe('0.0.0.0');
    expect(env.DATABASE_URL).toBe('postgres://postgres:postgres@postgres:5432/loopfleet');
    const fixed = ['GATEWAY_HOST', 'GATEWAY_PORT'];
    const missing = GATEWAY_VARIABLES.filter((name) => !fixed.includes(name) && !new RegExp(`^\\$\\{${name}:-[^}]*\\}$`).test(env[name] ?? ''));
    expect(missing).toEqual([]);
  });

  it('builds from a Dockerfile that exists and runs the loopfleet CLI', () => {
    const build = services.worker!.build as { context: string; dockerfile: string };
    const dockerfile = readFileSync(fileURLToPath(new URL(build.dockerfile, root)), 'utf8');
    expect(dockerfile).toContain('npm ci');
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "dist\/cli\/main\.js"\]/);
    expect(dockerfile).toContain('src/store/migrations');
  });

  it('gives every long-running service a health check and every service CPU and memory limits', () => {
    const oneShots = Object.keys(services).filter((name) => services[name]!.restart === 'no');
    expect(oneShots).toEqual(['migrate']);
    for (const [name, service] of Object.entries(services)) {
      if (!oneShots.includes(name)) expect((service.healthcheck as { test?: unknown } | undefined)?.test, `${name} health check`).toBeDefined();
      const limits = (service.deploy as { resources?: { limits?: { cpus?: unknown; memory?: unknown } } } | undefined)?.resources?.limits;
      expect(String(limits?.cpus ?? ''), `${name} cpus`).toMatch(/^(\d+(\.\d+)?|\$\{\w+:-\d+(\.\d+)?\})$/);
      expect(String(limits?.memory ?? ''), `${name} memory`).toMatch(/^(\d+[MG]|\$\{\w+:-\d+[MG]\})$/);
    }
    // A one-shot is waited for by its exit code instead of a health check.
    for (const name of oneShots) {
      const waiting = Object.values(services).filter((service) => (service.depends_on as Record<string, { condition?: string }> | undefined)?.[name]?.condition === 'service_completed_successfully');
      expect(waiting.length, name).toBeGreaterThan(0);
    }
  });
});

describe('docker-compose.yml secrets', () => {
  it('gives no service an LLM key through its environment', () => {
    for (const [name, service] of Object.entries(services)) {
      const env = (service.environment ?? {}) as Record<string, string>;
      for (const key of Object.keys(KEY_FILE_VARIABLES)) expect(env[key], `${name} ${key}`).toBeUndefined();
    }
  });

  it('mounts each key file as a compose secret of the worker, and tells the worker to read it only when it is set', () => {
    const worker = services.worker!;
    const env = worker.environment as Record<string, string>;
    for (const fileVariable of Object.values(KEY_FILE_VARIABLES)) {
      const secret = fileVariable.replace(/_FILE$/, '').toLowerCase();
      expect(worker.secrets, fileVariable).toContain(secret);
      expect(compose.secrets?.[secret]?.file).toBe(`\${${fileVariable}:-./deploy/secrets/no-key}`);
      expect(env[fileVariable]).toBe(`\${${fileVariable}:+/run/secrets/${secret}}`);
    }
    // The placeholder exists (compose refuses a missing secret file) and holds no key.
    expect(readFileSync(new URL('deploy/secrets/no-key', root), 'utf8')).toMatch(/^This placeholder/);
  });

  it('serves Grafana on this machine only, and beyond it only through the overlay that requires a password', () => {
    expect(services.grafana!.ports).toEqual(['127.0.0.1:${GRAFANA_PORT:-3000}:3000']);
    // `!override` is compose's own tag: it replaces the list instead of appending to it.
    const overrideTag = { tag: '!override', collection: 'seq' as const, resolve: (value: unknown) => value };
    const overlay = parse(readFileSync(new URL('deploy/compose.grafana-public.yml', root), 'utf8'), { customTags: [overrideTag] }) as {
      services: { grafana: { environment: Record<string, string>; ports: string[] } };
    };
    expect(overlay.services.grafana.environment.GF_SECURITY_ADMIN_PASSWORD).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?.+\}$/);
    expect(overlay.services.grafana.ports).toEqual(['${GRAFANA_BIND:-0.0.0.0}:${GRAFANA_PORT:-3000}:3000']);
    expect(readFileSync(new URL('deploy/compose.grafana-public.yml', root), 'utf8')).toMatch(/^\s+ports: !override$/m);
  });

  it('runs PgBouncer in transaction mode in front of Postgres, and the overlay points every database user at it with DATABASE_POOLER=transaction', () => {
    const pgbouncer = services.pgbouncer!;
    const env = pgbouncer.environment as Record<string, string>;
    expect(env.POOL_MODE).toBe('transaction');
    expect(env.DATABASE_URL).toBe('postgres://postgres:postgres@postgres:5432/loopfleet');
    expect(env.LISTEN_PORT).toBe('6432');
    expect(pgbouncer.ports).toBeUndefined();
    expect(pgbouncer.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' } });
    // Nothing uses it without the overlay.
    expect((services.worker!.environment as Record<string, string>).DATABASE_URL).not.toContain('pgbouncer');
    const overlay = parse(readFileSync(new URL('deploy/compose.pgbouncer.yml', root), 'utf8'), { merge: true }) as { services: Record<string, { environment: Record<string, string>; depends_on: Record<string, { condition: string }> }> };
    expect(Object.keys(overlay.services).sort()).toEqual(['gateway', 'migrate', 'worker']);
    for (const service of Object.values(overlay.services)) {
      expect(service.environment).toEqual({ DATABASE_URL: 'postgres://postgres:postgres@pgbouncer:6432/loopfleet', DATABASE_POOLER: 'transaction' });
      expect(service.depends_on).toEqual({ pgbouncer: { condition: 'service_healthy' } });
    }
  });
});
