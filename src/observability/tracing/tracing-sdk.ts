import { context, propagation, ProxyTracer, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { BullMQOtel } from 'bullmq-otel';
import { OtelTracer } from './otel-tracer.js';
import { otlpSettings } from './otlp-settings.js';
import type { Tracing } from './start-tracing.js';
import { TRACER_NAME, type TraceExporterKind } from './tracing-settings.js';

/**
 * Registers a tracer provider for the process (batching its spans to `exporter`), with the W3C
 * propagator and the async-context manager, and returns the {@link Tracing} on it. The OTLP
 * endpoint and headers and `OTEL_SERVICE_NAME` come from `env`; the sampler (`OTEL_TRACES_SAMPLER`,
 * `OTEL_TRACES_SAMPLER_ARG`), the rest of the exporter's settings and `OTEL_RESOURCE_ATTRIBUTES` are
 * read by the SDK from the process environment. Loaded by dynamic import only, when tracing is on.
 */
export function startSdk(exporter: SpanExporter | TraceExporterKind, serviceName: string, env: NodeJS.ProcessEnv): Tracing {
  const bullmq = new BullMQOtel({ tracerName: 'bullmq' });
  // Another part of the process (the application) registered its SDK: spans go there, it flushes them.
  if (!(trace.getTracer(TRACER_NAME) instanceof ProxyTracer)) {
    return { enabled: true, tracer: new OtelTracer(trace.getTracer(TRACER_NAME)), bullmq, flush: async () => {}, shutdown: async () => {} };
  }
  const named = env.OTEL_SERVICE_NAME?.trim() ?? '';
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName })
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(named === '' ? null : resourceFromAttributes({ [ATTR_SERVICE_NAME]: named }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporterOf(exporter, env))] });
  provider.register();
  let closing: Promise<void> | null = null;
  return {
    enabled: true,
    tracer: new OtelTracer(provider.getTracer(TRACER_NAME)),
    bullmq,
    flush: () => provider.forceFlush(),
    shutdown: () => {
      closing ??= provider.shutdown().finally(() => {
        // The process may start tracing again (tests do): the globals are released with the provider.
        trace.disable();
        propagation.disable();
        context.disable();
      });
      return closing;
    },
  };
}

function exporterOf(exporter: SpanExporter | TraceExporterKind, env: NodeJS.ProcessEnv): SpanExporter {
  if (exporter === 'otlp') return new OTLPTraceExporter(otlpSettings(env));
  if (exporter === 'console') return new ConsoleSpanExporter();
  return exporter;
}
