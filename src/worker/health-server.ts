import { createServer, type Server } from 'node:http';

/** How long a readiness probe waits for one dependency before reporting it unavailable. */
export const DEPENDENCY_TIMEOUT_MS = 2_000;

/** After this many timeouts a check still running is given up on and a new one starts. */
const STALE_CHECKS = 5;

export interface DependencyReport {
  ok: boolean;
  /** Per dependency: `ok`, the error it failed with, or that it timed out. */
  detail: Record<string, string>;
}

export interface HealthChecks {
  /** Whether the worker takes jobs (false once shutdown began). */
  accepting(): boolean;
  /** Postgres and Redis answer, in bounded time (see `dependencyChecks`). */
  dependencies(): Promise<DependencyReport>;
  /** Prometheus text for `/metrics`; null when metrics are not wired. */
  metrics?(): Promise<{ contentType: string; body: string }>;
}

/**
 * Builds `HealthChecks.dependencies` from one check per named dependency. Each probe waits at most
 * `timeoutMs` for each check. A check still running is joined, not started again: the worker's Redis
 * client queues commands while offline and never fails them (`maxRetriesPerRequest: null`), so a new
 * ping per probe would pile up in that queue, and a new query per probe would take pool connections.
 * One running for five timeouts is given up on, so a check stuck for good cannot hide a recovery.
 */
export function dependencyChecks(
  checks: Record<string, () => Promise<unknown>>,
  timeoutMs = DEPENDENCY_TIMEOUT_MS,
  now: () => number = Date.now,
): () => Promise<DependencyReport> {
  const running = new Map<string, { pending: Promise<unknown>; startedAt: number }>();
  const join = (name: string, check: () => Promise<unknown>): Promise<unknown> => {
    const current = running.get(name);
    // A check stuck past STALE_CHECKS timeouts (a query on a connection that died silently) is left
    // behind, so the dependency's recovery is seen: at most one new check per that long.
    if (current !== undefined && now() - current.startedAt < STALE_CHECKS * timeoutMs) return current.pending;
    const entry = { pending: Promise.resolve().then(check), startedAt: now() };
    const leave = (): void => {
      if (running.get(name) === entry) running.delete(name);
    };
    entry.pending.then(leave, leave);
    running.set(name, entry);
    return entry.pending;
  };
  return async () => {
    const answers = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => [name, await answerWithin(join(name, check), timeoutMs)] as const),
    );
    return { ok: answers.every(([, answer]) => answer === 'ok'), detail: Object.fromEntries(answers) };
  };
}

/** `ok`, the failure as text, or `timed out after … ms`; never rejects, never waits past `timeoutMs`. */
function answerWithin(pending: Promise<unknown>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`timed out after ${timeoutMs} ms`), timeoutMs);
  });
  const answered = pending.then(
    () => 'ok',
    (error: unknown) => String(error),
  );
  return Promise.race([answered, timedOut]).finally(() => clearTimeout(timer));
}

/**
 * `/healthz` (the process is alive), `/readyz` (it takes work and its dependencies answer; 503 with a
 * detail per dependency otherwise) and `/metrics` (when `checks.metrics` is given) on `METRICS_PORT`.
 * They answer GET and HEAD (HEAD without a body); any other method is 405 with `allow: GET, HEAD`.
 * Anything else is 404. Bound on all interfaces for container probes.
 */
export async function startHealthServer(port: number, checks: HealthChecks): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(body);
    };
    const known = path === '/healthz' || path === '/readyz' || (path === '/metrics' && checks.metrics !== undefined);
    if (!known) return reply(404, JSON.stringify({ error: 'not found' }));
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return reply(405, JSON.stringify({ error: 'method not allowed' }), { allow: 'GET, HEAD' });
    }
    if (path === '/healthz') return reply(200, JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      if (!checks.accepting()) return reply(503, JSON.stringify({ status: 'shutting_down' }));
      checks.dependencies().then(
        (result) => reply(result.ok ? 200 : 503, JSON.stringify({ status: result.ok ? 'ready' : 'unavailable', ...result.detail })),
        (error: unknown) => reply(503, JSON.stringify({ status: 'unavailable', error: String(error) })),
      );
      return;
    }
    // Only /metrics is left, and `known` made sure it is wired.
    checks.metrics?.().then(
      (metrics) => reply(200, metrics.body, { 'content-type': metrics.contentType }),
      (error: unknown) => reply(500, String(error), { 'content-type': 'text/plain' }),
    );
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
