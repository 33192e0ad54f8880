/**
 * Tracing is off unless `OTEL_TRACES_EXPORTER` names an exporter: the OpenTelemetry SDK is then never
 * imported (checked in a fresh process, where a loaded module would show), the loop gets the no-op
 * tracer, and BullMQ no telemetry.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ProxyTracer, trace } from '@opentelemetry/api';
import { describe, expect, it, vi } from 'vitest';
import { noopTracer } from '../../../src/core/ports/tracing.js';
import { startTracing, TRACING_OFF } from '../../../src/observability/tracing/start-tracing.js';
import { traceExporterKind } from '../../../src/observability/tracing/tracing-settings.js';

const source = (path: string) => fileURLToPath(new URL(`../../../src/${path}`, import.meta.url));
const START_TRACING = source('observability/tracing/start-tracing.ts');
/** What the worker, the gateway command and a producer import: none of them may pull the SDK in statically. */
const ENTRY_POINTS = [source('worker/start-worker.ts'), source('producer/session-queue.ts'), source('cli/commands/gateway.ts')];

/** Which OpenTelemetry SDK and bullmq-otel modules a fresh process loaded after `startTracing(env)`. */
function sdkModulesLoaded(env: Record<string, string>): Promise<string[]> {
  const script = `
    import { createRequire } from 'node:module';
    for (const entry of ${JSON.stringify(ENTRY_POINTS)}) await import(entry);
    const { startTracing } = await import(${JSON.stringify(START_TRACING)});
    const tracing = await startTracing(process.env, { serviceName: 'probe' });
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /sdk-trace|exporter-trace|bullmq-otel|@opentelemetry[\\\\/]resources/.test(path));
    await tracing.shutdown();
    process.stdout.write(JSON.stringify(loaded));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as string[]) : reject(new Error(`probe exited ${String(code)}: ${stderr}`))));
  });
}

describe('tracing off', () => {
  it('is off without OTEL_TRACES_EXPORTER, or with none or an empty value', async () => {
    for (const env of [{}, { OTEL_TRACES_EXPORTER: 'none' }, { OTEL_TRACES_EXPORTER: ' ' }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' }]) {
      const loadSdk = vi.fn();
      const tracing = await startTracing(env, { serviceName: 'test', loadSdk });
      expect(tracing).toBe(TRACING_OFF);
      expect(tracing.tracer).toBe(noopTracer);
      expect(tracing.bullmq).toBeUndefined();
      expect(loadSdk).not.toHaveBeenCalled();
    }
    // No provider was registered: the API's tracer is still the proxy of none.
    expect(trace.getTracer('loopfleet')).toBeInstanceOf(ProxyTracer);
  });

  it('turns on with otlp or console, and refuses any other exporter with config.invalid', () => {
    expect(traceExporterKind({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe('otlp');
    expect(traceExporterKind({ OTEL_TRACES_EXPORTER: 'Console' })).toBe('console');
    expect(() => traceExporterKind({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });

  it('never loads the SDK in a process that imports the worker, the gateway command and the client without an exporter set, and loads it with one', async () => {
    expect(await sdkModulesLoaded({})).toEqual([]);
    const on = await sdkModulesLoaded({ OTEL_TRACES_EXPORTER: 'console' });
    expect(on.some((path) => path.includes('sdk-trace-node'))).toBe(true);
    expect(on.some((path) => path.includes('bullmq-otel'))).toBe(true);
  }, 60_000);
});
