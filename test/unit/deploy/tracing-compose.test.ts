import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/** The compose file's tracing: a Jaeger service, and the worker and gateway sending to it (docs/tracing.md). */
const compose = parse(readFileSync(new URL('../../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true }) as {
  services: Record<string, Record<string, unknown>>;
};
const { jaeger, worker, gateway } = compose.services;

describe('docker-compose.yml tracing', () => {
  it('runs Jaeger with OTLP over HTTP, its UI on this machine only, a health check and resource limits', () => {
    expect(jaeger!.image).toMatch(/^jaegertracing\/jaeger:2\.\d+\.\d+$/);
    expect(jaeger!.expose).toContain('4318');
    expect(jaeger!.ports).toContain('${MONITORING_BIND:-127.0.0.1}:${JAEGER_UI_PORT:-16686}:16686');
    expect(JSON.stringify(jaeger!.healthcheck)).toContain('13133/status');
    expect(jaeger!.deploy).toMatchObject({ resources: { limits: { cpus: expect.any(String), memory: expect.any(String) } } });
  });

  it('points the worker and the gateway at it, each under its own service name, overridable from the shell', () => {
    for (const [service, name] of [
      [worker, 'loopfleet-worker'],
      [gateway, 'loopfleet-gateway'],
    ] as const) {
      const env = service!.environment as Record<string, string>;
      expect(env.OTEL_TRACES_EXPORTER).toBe('${OTEL_TRACES_EXPORTER:-otlp}');
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('${OTEL_EXPORTER_OTLP_ENDPOINT:-http://jaeger:4318}');
      expect(env.OTEL_SERVICE_NAME).toBe(name);
      // The loopfleet settings are still merged in beside them.
      expect(env.DATABASE_URL).toBe('postgres://postgres:postgres@postgres:5432/loopfleet');
    }
  });
});
