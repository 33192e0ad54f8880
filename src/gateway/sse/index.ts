import type { FastifyPluginAsync } from 'fastify';
import { resolveEventCursor } from './event-cursor.js';
import { errorResponses, eventStreamResponse, sessionIdParams } from './route-schemas.js';
import { pipeSessionEvents } from './pipe-session-events.js';
import { SseWriter } from './sse-writer.js';
import { hijackHeaders, type StreamRouteDeps } from './stream-route-deps.js';

export { findInputStart } from './find-input-start.js';
export type { StreamRouteDeps } from './stream-route-deps.js';

const eventsSchema = {
  summary: "Follow a session's events (SSE)",
  description:
    'Server-sent events: `id` is the Redis stream id, `event` the type, `data` the JSON. `Last-Event-ID` wins over `?after` ' +
    "(`0` everything retained, `$` only new, or a stream id). A cursor older than the stream gives `event: gap`. Heartbeat comment `: hb`.",
  tags: ['events'],
  params: sessionIdParams,
  querystring: { type: 'object', properties: { after: { type: 'string', description: "`0`, `$` or a stream id; default `$`" } } },
  headers: { type: 'object', properties: { 'last-event-id': { type: 'string' } } },
  response: Object.assign({ 200: eventStreamResponse('The session events, then live ones') }, errorResponses),
};

/** `GET /v1/sessions/:id/events`: a session's stream as SSE (docs/gateway-streams.md). */
export const eventRoutes: FastifyPluginAsync<StreamRouteDeps> = async (app, deps) => {
  app.get<{ Params: { id: string }; Querystring: { after?: string } }>('/v1/sessions/:id/events', { schema: eventsSchema }, async (request, reply) => {
    const sessionId = request.params.id;
    await deps.requireSession(request, sessionId, 'read');
    const after = resolveEventCursor(request.headers['last-event-id'], request.query.after);
    const stop = new AbortController();
    // Opened before the reply is taken over, so a refused id still answers 400.
    const items = deps.queue.subscribe(sessionId, { after, signal: stop.signal });
    const writer = new SseWriter(reply.raw, { heartbeatMs: deps.heartbeatMs, headers: hijackHeaders(reply) });
    writer.signal.addEventListener('abort', () => stop.abort(), { once: true });
    writer.open();
    deps.onSseOpen?.(1);
    try {
      await pipeSessionEvents(items, writer, () => deps.onSseEvent?.());
    } catch (error) {
      if (!writer.signal.aborted) request.log.warn({ err: error, sessionId }, 'event stream ended by an error');
    } finally {
      stop.abort();
      writer.close();
      deps.onSseOpen?.(-1);
    }
  });
};
