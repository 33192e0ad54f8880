import type { Telemetry } from 'bullmq';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { noopTracer, type Tracer } from '../../core/ports/tracing.js';
import { traceExporterKind, type TraceExporterKind } from './tracing-settings.js';

/** A process's tracing (docs/tracing.md): the loop's tracer, BullMQ's telemetry, and how to flush. */
export interface Tracing {
  readonly enabled: boolean;
  /** What the loop opens its spans with ({@link noopTracer} when off). */
  readonly tracer: Tracer;
  /** BullMQ's own spans (bullmq-otel), given as `telemetry` to its Queue and Worker; undefined when off. */
  readonly bullmq: Telemetry | undefined;
  /** Exports the spans buffered so far. */
  flush(): Promise<void>;
  /** Exports the spans still buffered, then stops. Idempotent. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}. */
export interface StartTracingOptions {
  /** `service.name` when `OTEL_SERVICE_NAME` does not set one: `loopfleet-worker`, `loopfleet-gateway` … */
  serviceName: string;
  /** Spans go here, and tracing is on whatever the environment says (tests: an `InMemorySpanExporter`). */
  exporter?: SpanExporter;
  /** Loads the SDK; default a dynamic import of `tracing-sdk.ts`. Injectable to prove it is not loaded when off. */
  loadSdk?: () => Promise<TracingSdk>;
}

/** What `tracing-sdk.ts` exports: loaded only when tracing is on. */
export interface TracingSdk {
  startSdk(exporter: SpanExporter | TraceExporterKind, serviceName: string, env: NodeJS.ProcessEnv): Tracing;
}

/** Tracing off: a no-op tracer, nothing loaded, nothing to flush. */
export const TRACING_OFF: Tracing = Object.freeze({ enabled: false, tracer: noopTracer, bullmq: undefined, flush: async () => {}, shutdown: async () => {} });

/**
 * Starts tracing as the standard `OTEL_*` variables ask (`OTEL_TRACES_EXPORTER=otlp` and
 * `OTEL_EXPORTER_OTLP_ENDPOINT` …). Off unless an exporter is set: then the OpenTelemetry SDK is never
 * imported and the loop's tracer is the no-op one. When another part of the process registered an
 * OpenTelemetry SDK already, its provider is used as it is. Throws `config.invalid` for an unknown
 * `OTEL_TRACES_EXPORTER`.
 */
export async function startTracing(env: NodeJS.ProcessEnv, options: StartTracingOptions): Promise<Tracing> {
  const kind = options.exporter ?? traceExporterKind(env);
  if (kind === null) return TRACING_OFF;
  const sdk = await (options.loadSdk ?? loadTracingSdk)();
  return sdk.startSdk(kind, options.serviceName, env);
}

function loadTracingSdk(): Promise<TracingSdk> {
  return import('./tracing-sdk.js');
}
