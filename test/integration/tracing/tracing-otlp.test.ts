/**
 * `SessionQueue.fromEnv` with `OTEL_TRACES_EXPORTER=otlp`: the SDK loads, the add's `send` span goes
 * over OTLP/HTTP to the endpoint its `env` names (a fake collector here), under the service name it
 * names, and the input stores that span's context. `close()` flushes it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

interface Posted {
  path: string;
  contentType: string | undefined;
  authorization: string | undefined;
  body: string;
}

describe('OTLP export from SessionQueue.fromEnv', () => {
  let fleet: FleetFixture;
  let collector: Server;
  const posted: Posted[] = [];

  beforeAll(async () => {
    fleet = await FleetFixture.create('tracing_otlp');
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        posted.push({ path: req.url ?? '', contentType: req.headers['content-type'], authorization: req.headers.authorization, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await fleet?.close();
    await new Promise((resolve) => collector?.close(resolve));
  });

  it('sends the add’s span to the collector the env names, and stores its context with the input', async () => {
    const { port } = collector.address() as AddressInfo;
    const queue = SessionQueue.fromEnv(
      Object.assign({}, fleet.env, {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t0ken',
        OTEL_SERVICE_NAME: 'traced-producer',
      }),
    );
    try {
      await queue.add('send', { sessionId: 'otlp-session', input: 'hello' });
    } finally {
      await queue.close();
    }
    expect(posted.map((post) => post.path)).toEqual(['/v1/traces']);
    expect(posted[0]!.contentType).toContain('application/json');
    expect(posted[0]!.authorization).toBe('Bearer t0ken');
    const body = JSON.parse(posted[0]!.body) as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string; traceId: string; spanId: string }[] }[] }[];
    };
    const [resourceSpans] = body.resourceSpans;
    expect(resourceSpans!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'traced-producer' } });
    const spans = resourceSpans!.scopeSpans.flatMap((scope) => scope.spans);
    const send = spans.find((span) => span.name === `send ${fleet.config.queueName}`)!;
    expect(send).toBeDefined();
    const [input] = await fleet.store.listInputs('otlp-session', { limit: 1 });
    expect(input!.traceContext?.traceparent).toBe(`00-${send.traceId}-${send.spanId}-01`);
  });

  it('refuses an unknown exporter with config.invalid before opening anything', () => {
    expect(() => SessionQueue.fromEnv(Object.assign({}, fleet.env, { OTEL_TRACES_EXPORTER: 'jaeger-thrift' }))).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });
});
