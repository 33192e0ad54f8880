import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisConnection } from '../../fleet/redis-connection.js';
import type { SessionRecord } from '../../core/session-types.js';
import type { SessionQueue } from '../../producer/session-queue.js';
import type { InputHandle } from '../../producer/input-handle.js';
import type { Scope } from '../principal.js';

/** What the SSE and chat routes need from the gateway that registers them. */
export interface StreamRouteDeps {
  queue: SessionQueue;
  /** A Redis connection for plain reads (`XRANGE`, `XREVRANGE`) of the event streams. */
  redis: RedisConnection;
  /** Interval of the `: hb` comment, in ms (`GATEWAY_SSE_HEARTBEAT_MS`). */
  heartbeatMs: number;
  /** Auth, tenant and `sessions` claim check of one session; throws 404/403 errors. */
  requireSession(request: FastifyRequest, sessionId: string, needed: Scope): Promise<SessionRecord>;
  /**
   * Accepts a `send` input for the caller, creating the session for its tenant when new (write
   * scope), as `POST /v1/sessions/:id/inputs` does.
   */
  acceptSend(request: FastifyRequest, sessionId: string, data: { input: string; inputId: string }): Promise<InputHandle>;
  /** Counts open SSE responses (+1, -1) and events sent, for `/metrics`. */
  onSseOpen?(delta: 1 | -1): void;
  onSseEvent?(): void;
}

/** Opens an SSE response of a route that already validated everything: Fastify lets go of the reply. */
export function hijackHeaders(reply: FastifyReply): Record<string, string | number | string[]> {
  reply.hijack();
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  return headers;
}
