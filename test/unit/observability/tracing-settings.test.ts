import { describe, expect, it } from 'vitest';
import { parseTraceContext } from '../../../src/core/ports/tracing.js';
import { otlpSettings } from '../../../src/observability/tracing/otlp-settings.js';

describe('otlpSettings', () => {
  it('takes the traces endpoint as it is, or the base endpoint with /v1/traces', () => {
    expect(otlpSettings({})).toEqual({});
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318/' })).toEqual({ url: 'http://jaeger:4318/v1/traces' });
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' })).toEqual({ url: 'http://b:4318/traces' });
  });

  it('reads key=value headers, percent-decoded, the traces ones winning', () => {
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b, x=1,broken', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x=2' })).toEqual({ headers: { 'api-key': 'a b', x: '2' } });
  });
});

describe('parseTraceContext', () => {
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('keeps a valid traceparent and its tracestate', () => {
    expect(parseTraceContext(traceparent, 'vendor=1')).toEqual({ traceparent, tracestate: 'vendor=1' });
    expect(parseTraceContext(traceparent, '')).toEqual({ traceparent });
  });

  it('drops what W3C Trace Context calls invalid, and a tracestate too long to keep', () => {
    for (const bad of [undefined, 42, '', 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01']) {
      expect(parseTraceContext(bad)).toBeNull();
    }
    expect(parseTraceContext(traceparent, 'x'.repeat(600))).toEqual({ traceparent });
  });
});
