import type { RedisConnection } from './redis-connection.js';
import { kickSession, type KickDeps } from './kick.js';

/**
 * Parked sessions of a tenant at its cap on inputs running at once (docs/tenant-limits.md): a sorted
 * set per tenant, `<queue>:parked:<tenant>`, member the session id, score when it was first parked.
 * In a namespace of its own (`<queue>:parked:`), which no stream, fence or BullMQ key can name.
 */
export function parkedKey(queueName: string, tenant: string): string {
  return `${queueName}:parked:${tenant}`;
}

/** Parks a session: it waits for a slot of its tenant. Parked again, it keeps its place (NX). */
export async function parkSession(redis: RedisConnection, queueName: string, tenant: string, sessionId: string, nowMs: number): Promise<void> {
  await redis.zadd(parkedKey(queueName, tenant), 'NX', nowMs, sessionId);
}

/** Takes a session out of its tenant's parked set: it got a slot after all. */
export async function unparkSession(redis: RedisConnection, queueName: string, tenant: string, sessionId: string): Promise<void> {
  await redis.zrem(parkedKey(queueName, tenant), sessionId);
}

/**
 * Wakes up to `count` of the tenant's parked sessions, longest parked first: each is taken out of the
 * set and kicked. Its drain takes the slot, or parks it again if another session got there first (the
 * session that did will wake the next one). Returns the sessions kicked.
 */
export async function wakeParked(redis: RedisConnection, kick: KickDeps, queueName: string, tenant: string, count = 1): Promise<string[]> {
  const popped = await redis.zpopmin(parkedKey(queueName, tenant), count);
  const sessions: string[] = [];
  // ZPOPMIN answers member, score, member, score …
  for (let index = 0; index < popped.length; index += 2) sessions.push(popped[index]!);
  for (const sessionId of sessions) await kickSession(kick, { sessionId, tenant });
  return sessions;
}
