import { context, isSpanContextValid, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { TraceContext } from '../../core/ports/tracing.js';
import { TRACER_NAME } from './tracing-settings.js';

/**
 * Runs an add inside the producer's span (`send <queue>`), handing `work` the span's W3C trace
 * context to store with the input: the worker's span for the input continues it (docs/tracing.md).
 * Uses the process's registered OpenTelemetry SDK; with none (tracing off) the span is the API's
 * no-op one, and `work` gets null at the cost of one no-op call.
 */
export async function withProducerSpan<T>(name: string, attributes: Attributes, work: (traceContext: TraceContext | null) => Promise<T>): Promise<T> {
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind: SpanKind.PRODUCER, attributes });
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return work(null);
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  const state = spanContext.traceState?.serialize();
  const carried: TraceContext = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
  if (state !== undefined && state !== '') carried.tracestate = state;
  try {
    // Active while the add runs, so BullMQ's span for the kick (bullmq-otel) is a child of it.
    const result = await context.with(trace.setSpan(context.active(), span), () => work(carried));
    span.end();
    return result;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    span.setAttributes({ 'error.type': typeof code === 'string' ? code : 'Error' });
    span.setStatus({ code: SpanStatusCode.ERROR, message: typeof message === 'string' ? message.slice(0, 500) : String(error) });
    span.end();
    throw error;
  }
}

/** The name and attributes of an add's span: the messaging conventions' `send`, and which session and kind. */
export function addSpan(queueName: string, sessionId: string, kind: string): { name: string; attributes: Attributes } {
  return {
    name: `send ${queueName}`,
    attributes: {
      'messaging.system': 'loopfleet',
      'messaging.operation.type': 'send',
      'messaging.destination.name': queueName,
      'loopfleet.session.id': sessionId,
      'loopfleet.input.kind': kind,
    },
  };
}
