import type { Redis } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type { SessionRecord } from '../core/session-types.js';
import { lastEventId } from '../events/event-subscriber.js';
import type { SessionQueue } from '../producer/session-queue.js';
import type { InputCounts, ChildSummary } from '../producer/session-stats.js';
import { findInputStart } from './sse/find-input-start.js';

/** `GET /v1/sessions/:id`: the stored session with its inputs by status, stats, children and where to follow its events. */
export interface SessionView {
  id: string;
  tenant: string;
  agent: string;
  status: SessionRecord['status'];
  systemPrompt: string | null;
  metadata: Record<string, unknown>;
  parentSessionId: string | null;
  rootSessionId: string;
  depth: number;
  lease: { owner: string | null; expiresAt: Date | null };
  pending: SessionRecord['pending'];
  cancelRequestedAt: Date | null;
  inputs: InputCounts;
  stats: SessionRecord['stats'];
  children: ChildSummary[];
  /** The running (or next pending) input's start when one is open, else the newest event; null without Redis. */
  eventCursor: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Builds the view of a session the caller may read. */
export async function sessionView(queue: SessionQueue, redis: RedisConnection | undefined, session: SessionRecord): Promise<SessionView> {
  const [report, eventCursor] = await Promise.all([queue.stats(session.id), redis === undefined ? null : viewCursor(queue, redis, session.id)]);
  return {
    id: session.id,
    tenant: session.tenant,
    agent: session.agent,
    status: report.status,
    systemPrompt: session.systemPrompt,
    metadata: session.metadata,
    parentSessionId: session.parentSessionId,
    rootSessionId: session.rootSessionId,
    depth: session.depth,
    lease: { owner: session.lease.owner, expiresAt: session.lease.expiresAt },
    pending: session.pending,
    cancelRequestedAt: session.cancelRequestedAt,
    inputs: report.inputs,
    stats: report.totals,
    children: report.tree.children,
    eventCursor,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
  };
}

/** A viewer that loads history and then follows from here misses nothing of an answer in progress. */
async function viewCursor(queue: SessionQueue, redis: RedisConnection, sessionId: string): Promise<string> {
  const [open] = await queue.sessions.inputs(sessionId, { status: ['running', 'waiting', 'pending'], limit: 1 });
  if (open !== undefined) return findInputStart(redis, queue.layout, sessionId, open.seq);
  return (await lastEventId(redis, queue.layout, sessionId)) ?? '0';
}
