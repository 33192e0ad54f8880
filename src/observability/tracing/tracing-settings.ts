import { ConfigInvalidError } from '../../core/errors/index.js';

/** The instrumentation scope of loopfleet's own spans. */
export const TRACER_NAME = 'loopfleet';

/** Where spans go: OTLP over HTTP (a collector, Jaeger), the console, or nowhere (tracing off). */
export type TraceExporterKind = 'otlp' | 'console';

/**
 * What the standard `OTEL_TRACES_EXPORTER` variable asks for (docs/tracing.md): `otlp` or
 * `console` turn tracing on; unset, empty or `none` leave it off. Unlike the OpenTelemetry SDK's own
 * default (`otlp`), loopfleet traces only when asked: no SDK is loaded otherwise. The endpoint,
 * headers, sampler and service name are the SDK's standard variables, read by the SDK itself.
 * Throws `config.invalid` for any other value.
 */
export function traceExporterKind(env: NodeJS.ProcessEnv): TraceExporterKind | null {
  const raw = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() ?? '';
  if (raw === '' || raw === 'none') return null;
  if (raw === 'otlp' || raw === 'console') return raw;
  throw new ConfigInvalidError(`OTEL_TRACES_EXPORTER must be otlp, console or none, got ${JSON.stringify(env.OTEL_TRACES_EXPORTER)}`, {
    details: { variable: 'OTEL_TRACES_EXPORTER' },
  });
}
