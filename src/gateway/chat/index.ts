import type {} from '@fastify/swagger'; // its types add summary, tags and description to route schemas
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { StreamEvent, StreamItem } from '../../fleet/fleet-events.js';
import { findInputStart } from '../sse/find-input-start.js';
import { errorResponses } from '../openapi.js';
import { sessionIdParams } from '../routes/schemas.js';
import { eventStreamResponse } from '../sse/route-schemas.js';
import { SseWriter } from '../sse/sse-writer.js';
import { hijackHeaders, type StreamRouteDeps } from '../sse/stream-route-deps.js';
import { parseChatRequest } from './chat-request.js';
import { loadChatMessages } from './load-chat-messages.js';
import { readAnswerBacklog, writeInputAnswer } from './input-answer.js';

/** The header that tells the AI SDK the body is its UI message stream, protocol v1. */
export const UI_MESSAGE_STREAM_HEADER = 'x-vercel-ai-ui-message-stream';

const chatBody = {
  type: 'object',
  required: ['id', 'messages'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 128, description: 'The session id' },
    messages: { type: 'array', minItems: 1, items: { type: 'object' }, description: 'UI messages; the last user one is sent' },
    trigger: { type: 'string', enum: ['submit-message', 'regenerate-message'] },
    messageId: { type: 'string' },
  },
} as const;

const uiMessage = {
  type: 'object',
  required: ['id', 'role', 'parts'],
  properties: { id: { type: 'string' }, role: { type: 'string' }, parts: { type: 'array', items: { type: 'object', additionalProperties: true } } },
} as const;

const streamDescription = 'The AI SDK UI message stream (SSE, `x-vercel-ai-ui-message-stream: v1`), ending `data: [DONE]`';

/**
 * `POST /v1/chat`, `GET /v1/chat/:id/stream` and `GET /v1/chat/:id/messages`: what `useChat` with
 * `DefaultChatTransport` calls (docs/gateway-streams.md).
 */
export const chatRoutes: FastifyPluginAsync<StreamRouteDeps> = async (app, deps) => {
  app.post<{ Body: { id: string; messages: unknown[]; trigger?: string } }>(
    '/v1/chat',
    {
      schema: {
        summary: 'Send a chat message and stream the answer (AI SDK UI message stream)',
        tags: ['chat'],
        body: chatBody,
        response: Object.assign({ 200: eventStreamResponse(streamDescription) }, errorResponses),
      },
    },
    async (request, reply) => {
      const chat = parseChatRequest(request.body);
      const handle = await deps.acceptSend(request, chat.sessionId, { input: chat.text, inputId: chat.inputId });
      if (!handle.duplicate) {
        await streamAnswer(deps, request, reply, handle.sessionId, handle.seq, [], (signal) => handle.events({ signal }));
        return;
      }
      // A retry of the same message: its answer from the start, as a resume gives it.
      await resumeAnswer(deps, request, reply, handle.sessionId, handle.seq);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/chat/:id/stream',
    {
      schema: {
        summary: "Resume the running answer of a chat from its start (204 when none runs)",
        tags: ['chat'],
        params: sessionIdParams,
        response: Object.assign({ 200: eventStreamResponse(streamDescription), 204: { description: 'No input runs', type: 'null' } }, errorResponses),
      },
    },
    async (request, reply) => {
      const sessionId = request.params.id;
      await deps.requireSession(request, sessionId, 'read');
      const [current] = await deps.queue.sessions.inputs(sessionId, { status: ['running', 'pending'], limit: 1 });
      if (current === undefined) return reply.code(204).send();
      await resumeAnswer(deps, request, reply, sessionId, current.seq);
      return reply;
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/chat/:id/messages',
    {
      schema: {
        summary: "A chat's messages as AI SDK UIMessages (the running answer left out)",
        tags: ['chat'],
        params: sessionIdParams,
        response: Object.assign({ 200: { type: 'array', items: uiMessage } }, errorResponses),
      },
    },
    async (request) => {
      const sessionId = request.params.id;
      await deps.requireSession(request, sessionId, 'read');
      return loadChatMessages(deps.queue, sessionId);
    },
  );
};

async function resumeAnswer(deps: StreamRouteDeps, request: FastifyRequest, reply: FastifyReply, sessionId: string, seq: number): Promise<void> {
  const start = await findInputStart(deps.redis, deps.queue.layout, sessionId, seq);
  const backlog = await readAnswerBacklog(deps.redis, deps.queue.layout, sessionId, seq, start);
  await streamAnswer(deps, request, reply, sessionId, seq, backlog.events, (signal) => deps.queue.subscribe(sessionId, { after: backlog.lastId, signal }));
}

async function streamAnswer(
  deps: StreamRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
  seq: number,
  backlog: StreamEvent[],
  live: (signal: AbortSignal) => AsyncIterable<StreamItem>,
): Promise<void> {
  const writer = new SseWriter(reply.raw, { heartbeatMs: deps.heartbeatMs, headers: hijackHeaders(reply) });
  writer.open({ [UI_MESSAGE_STREAM_HEADER]: 'v1' });
  deps.onSseOpen?.(1);
  try {
    await writeInputAnswer(sessionId, seq, backlog, () => live(writer.signal), async (chunk) => {
      await writer.writeText(`data: ${JSON.stringify(chunk)}\n\n`);
      deps.onSseEvent?.();
    });
    await writer.writeText('data: [DONE]\n\n');
  } catch (error) {
    if (!writer.signal.aborted) request.log.warn({ err: error, sessionId, seq }, 'chat stream ended by an error');
  } finally {
    writer.close();
    deps.onSseOpen?.(-1);
  }
}
