import { createServer, type Server } from 'node:http';

export interface HealthChecks {
  /** Whether the worker takes jobs (false once shutdown began). */
  accepting(): boolean;
  /** Postgres and Redis answer; cached by the caller if costly. */
  dependencies(): Promise<{ ok: boolean; detail: Record<string, string> }>;
  /** Prometheus text for `/metrics`; null when metrics are not wired. */
  metrics?(): Promise<{ contentType: string; body: string }>;
}

/**
 * `/healthz` (the process is alive), `/readyz` (it takes work and its dependencies answer) and
 * `/metrics` on `METRICS_PORT`. Anything else is 404. Bound on all interfaces for container probes.
 */
export async function startHealthServer(port: number, checks: HealthChecks): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'application/json') => {
      response.writeHead(status, { 'content-type': type });
      response.end(body);
    };
    if (path === '/healthz') return reply(200, JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      if (!checks.accepting()) return reply(503, JSON.stringify({ status: 'shutting_down' }));
      checks.dependencies().then(
        (result) => reply(result.ok ? 200 : 503, JSON.stringify({ status: result.ok ? 'ready' : 'unavailable', ...result.detail })),
        (error: unknown) => reply(503, JSON.stringify({ status: 'unavailable', error: String(error) })),
      );
      return;
    }
    if (path === '/metrics' && checks.metrics !== undefined) {
      checks.metrics().then(
        (metrics) => reply(200, metrics.body, metrics.contentType),
        (error: unknown) => reply(500, String(error), 'text/plain'),
      );
      return;
    }
    reply(404, JSON.stringify({ error: 'not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
