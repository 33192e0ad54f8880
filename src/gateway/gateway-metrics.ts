import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The gateway's own Prometheus metrics, on a registry of their own (`GET /metrics`). */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #duration: Histogram<'method' | 'route'>;
  readonly #sseOpen: Gauge;
  readonly #sseEvents: Counter;

  constructor() {
    const registers = [this.registry];
    this.#requests = new Counter({ name: 'loopfleet_gateway_http_requests_total', help: 'HTTP requests answered, by route and status.', labelNames: ['method', 'route', 'status'], registers });
    this.#duration = new Histogram({
      name: 'loopfleet_gateway_http_request_duration_seconds',
      help: 'Time to answer a request (to the end of the stream for SSE).',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.#sseOpen = new Gauge({ name: 'loopfleet_gateway_sse_clients', help: 'SSE responses open now.', registers });
    this.#sseEvents = new Counter({ name: 'loopfleet_gateway_sse_events_sent_total', help: 'SSE events written to clients.', registers });
  }

  /** One answered request; `route` is the route's pattern (`/v1/sessions/:id`), never the raw URL. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.#requests.inc({ method, route, status: String(status) });
    this.#duration.observe({ method, route }, seconds);
  }

  sseOpen(delta: 1 | -1): void {
    this.#sseOpen.inc(delta);
  }

  sseEvent(): void {
    this.#sseEvents.inc();
  }
}
