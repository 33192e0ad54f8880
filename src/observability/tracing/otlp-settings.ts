/**
 * The OTLP exporter's URL and headers from the standard variables of the environment the process
 * was configured with (docs/tracing.md), so `SessionQueue.fromEnv(env)` with an `env` of its own
 * sends where that `env` says, not where `process.env` does. Unset: the exporter's own defaults.
 */
export interface OtlpSettings {
  url?: string;
  headers?: Record<string, string>;
}

/**
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`;
 * the headers of `OTEL_EXPORTER_OTLP_HEADERS`, then `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (which wins),
 * each `key=value` pairs separated by commas, percent-decoded.
 */
export function otlpSettings(env: NodeJS.ProcessEnv): OtlpSettings {
  const settings: OtlpSettings = {};
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ?? '';
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? '';
  if (traces !== '') settings.url = traces;
  else if (base !== '') settings.url = `${base.replace(/\/+$/, '')}/v1/traces`;
  const headers = Object.assign(parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS));
  if (Object.keys(headers).length > 0) settings.headers = headers;
  return settings;
}

function parseHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = decode(pair.slice(0, at).trim());
    if (key !== '') headers[key] = decode(pair.slice(at + 1).trim());
  }
  return headers;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
