/**
 * The tracing port (docs/tracing.md): the loop opens a span per input, per round, per model call and
 * per tool call through it, and never sees OpenTelemetry. Off by default: {@link noopTracer} costs one
 * call per span and records nothing. The worker hands the loop an OpenTelemetry-backed tracer only
 * when an exporter is configured.
 */

/** A span attribute's value; `undefined` values are skipped. */
export type TraceAttributeValue = string | number | boolean | readonly string[] | undefined;

/** Span attributes by name (GenAI names such as `gen_ai.request.model`, or `loopfleet.*`). */
export type TraceAttributes = Readonly<Record<string, TraceAttributeValue>>;

/**
 * A W3C trace context (`traceparent`, optional `tracestate`) as it travels with an input: the
 * producer's span, which the input's span continues.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** One open span. Every method is safe to call after `end` (it then does nothing). */
export interface TraceSpan {
  setAttributes(attributes: TraceAttributes): void;
  /** Marks the span failed: status error, with the error's code and message recorded. */
  recordError(error: unknown): void;
  end(): void;
}

/** How a span is opened. */
export interface StartSpanOptions {
  /** The span it belongs to; absent or null: a root span (or a child of `remote`). */
  parent?: TraceSpan | null;
  /** A span of another process (the producer's) to continue, when there is no local parent. */
  remote?: TraceContext | null;
  /** `consumer` for the span of an input taken from the inbox, `client` for a call out; default `internal`. */
  kind?: 'internal' | 'client' | 'consumer' | 'producer';
  attributes?: TraceAttributes;
}

/** Opens spans. */
export interface Tracer {
  /** False for {@link noopTracer}: callers skip building attributes nobody records. */
  readonly enabled: boolean;
  startSpan(name: string, options?: StartSpanOptions): TraceSpan;
}

/** The span of {@link noopTracer}: records nothing. */
export const NOOP_SPAN: TraceSpan = Object.freeze({
  setAttributes: () => {},
  recordError: () => {},
  end: () => {},
});

/** The default tracer: tracing off. */
export const noopTracer: Tracer = Object.freeze({ enabled: false, startSpan: () => NOOP_SPAN });

/** `version-traceid-spanid-flags`, lowercase hex, as W3C Trace Context writes it (version ff is invalid). */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Longest `tracestate` kept (W3C allows 32 members of at most 256 characters each). */
export const MAX_TRACESTATE_CHARS = 512;

/**
 * A trace context read from outside (an add, a raw job, a stored row): the valid one, or null when
 * there is none or it is malformed. Tracing is best effort: a bad header never refuses an input.
 */
export function parseTraceContext(traceparent: unknown, tracestate?: unknown): TraceContext | null {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return null;
  if (typeof tracestate !== 'string' || tracestate === '' || tracestate.length > MAX_TRACESTATE_CHARS) return { traceparent };
  return { traceparent, tracestate };
}
