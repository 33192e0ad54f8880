import { context, createTraceState, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer as ApiTracer } from '@opentelemetry/api';
import type { StartSpanOptions, TraceAttributes, TraceContext, Tracer, TraceSpan } from '../../core/ports/tracing.js';

const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, consumer: SpanKind.CONSUMER, producer: SpanKind.PRODUCER } as const;

/** The loop's tracing port on an OpenTelemetry tracer (docs/tracing.md). */
export class OtelTracer implements Tracer {
  readonly enabled = true;

  constructor(private readonly tracer: ApiTracer) {}

  startSpan(name: string, options: StartSpanOptions = {}): TraceSpan {
    const parent = options.parent instanceof OtelSpan ? trace.setSpan(context.active(), options.parent.span) : remoteContext(options.remote ?? null);
    const span = this.tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: defined(options.attributes) }, parent);
    return new OtelSpan(span);
  }
}

/** One span of {@link OtelTracer}. */
class OtelSpan implements TraceSpan {
  constructor(readonly span: Span) {}

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(defined(attributes));
  }

  recordError(error: unknown): void {
    const { code, message } = describeError(error);
    if (error instanceof Error) this.span.recordException(error);
    this.span.setAttributes({ 'error.type': code });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

/** The context a span continues from a producer's W3C trace context; the active (root) one without it. */
function remoteContext(remote: TraceContext | null) {
  const active = context.active();
  if (remote === null) return active;
  const [, traceId, spanId, flags] = remote.traceparent.split('-') as [string, string, string, string];
  const traceState = remote.tracestate === undefined ? undefined : createTraceState(remote.tracestate);
  return trace.setSpanContext(active, { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 1, isRemote: true, ...(traceState !== undefined ? { traceState } : {}) });
}

function defined(attributes: TraceAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (attributes === undefined) return out;
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value as Attributes[string];
  return out;
}

/** The error's stable code (a loopfleet error's `code`, else its class name) and message. */
function describeError(error: unknown): { code: string; message: string } {
  if (typeof error === 'object' && error !== null) {
    const { code, message, name } = error as { code?: unknown; message?: unknown; name?: unknown };
    const type = typeof code === 'string' ? code : typeof name === 'string' ? name : 'Error';
    return { code: type, message: typeof message === 'string' ? message.slice(0, 500) : type };
  }
  return { code: typeof error, message: String(error).slice(0, 500) };
}
