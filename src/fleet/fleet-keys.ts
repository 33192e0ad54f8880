import { shardKeyRoot, shardOf, type RedisLayout } from './redis-layout.js';

/**
 * Names shared by producers and workers: what goes on the BullMQ queue and in Redis. Anything that
 * talks to a loopfleet fleet — this client, the worker, a raw BullMQ producer in another language —
 * agrees on these (docs/client.md).
 */

/** Job names on the queue `LOOPFLEET_QUEUE`. */
export const JOB = {
  /** Wake-up for one session: "its inbox may have pending inputs". Carries no input. */
  drain: 'drain',
  /** Raw path: an input from any BullMQ client, ingested into the inbox by a worker. */
  send: 'send',
  resume: 'resume',
  /** A timer's alarm: a delayed job per firing (data {@link TimerJobData}); the worker delivers the firing. */
  timer: 'timer',
  /** The periodic repair job (job scheduler). */
  sweep: 'sweep',
} as const;

/** One of the job names in {@link JOB}. */
export type JobName = (typeof JOB)[keyof typeof JOB];

/**
 * The queue whose keys are meant: its name (`LOOPFLEET_QUEUE`) for one Redis node, or its layout,
 * which on a Redis Cluster puts a session's event keys under its queue shard's hash tag.
 */
export type QueueKeys = string | RedisLayout;

/** What a session's event keys start with: `<queue>:` on one node, its shard's `{<queue>:<shard>}:` on a cluster. */
function eventRoot(queue: QueueKeys, sessionId: string): string {
  if (typeof queue === 'string') return queue;
  return queue.cluster ? shardKeyRoot(queue, shardOf(queue, sessionId)) : queue.queueName;
}

/**
 * The Redis stream of a session's events: `<queue>:events:<sessionId>`. On a Redis Cluster (a
 * `layout` with `cluster`) it is `{<queue>:<shard>}:events:<sessionId>`: the session's event keys
 * and channels share the slot of its queue shard, so one script call writes every session of a
 * shard that has events ready (docs/redis-cluster.md).
 */
export function eventStreamKey(queue: QueueKeys, sessionId: string): string {
  return `${eventRoot(queue, sessionId)}:events:${sessionId}`;
}

/** Per-session event sequence counter, next to its stream. */
export function eventSeqKey(queue: QueueKeys, sessionId: string): string {
  return `${eventStreamKey(queue, sessionId)}:seq`;
}

/**
 * The input seqs whose `input_finished` is on the session's stream (a sorted set, member and score the
 * input seq, bounded to the newest ones): the publish script writes an input's finish only once (I6).
 */
export function eventFinishedKey(queue: QueueKeys, sessionId: string): string {
  return `${eventStreamKey(queue, sessionId)}:finished`;
}

/**
 * The deletion fence of a session id (a string: the last lease token the session had when it was
 * deleted): the publish script refuses events written under that token or an older one, so a worker
 * still running one of the deleted session's inputs cannot write into the stream of a session created
 * again under the same id (whose leases all have larger tokens). Set by `sessions.delete`, for a fixed
 * 7 days (`DELETION_FENCE_SECONDS`). In a namespace of its own, `<queue>:deleted:<id>`, which no
 * session's stream key (`<queue>:events:<id>`) can name, whatever the id.
 */
export function eventDeletedKey(queue: QueueKeys, sessionId: string): string {
  return `${eventRoot(queue, sessionId)}:deleted:${sessionId}`;
}

/** What {@link finishChannel} appends to a session's stream key. */
export const FINISH_CHANNEL_SUFFIX = ':finishes';

/**
 * The pub/sub channel on which the publish script announces every `input_finished` it writes to a
 * session's stream: the stream key with {@link FINISH_CHANNEL_SUFFIX} appended (channels are not
 * keys; no other session's channel has this name). Each message is `<stream id> <data>`, the entry
 * as written, so `result()` waiters share one subscribed connection instead of a blocked read each.
 */
export function finishChannel(queue: QueueKeys, sessionId: string): string {
  return `${eventStreamKey(queue, sessionId)}${FINISH_CHANNEL_SUFFIX}`;
}

/** What {@link tailChannel} appends to a session's stream key. */
export const TAIL_CHANNEL_SUFFIX = ':tail';

/**
 * The pub/sub channel on which the publish script publishes the entries each write appends to a
 * followed session's stream (one with a subscriber here): the stream key with
 * {@link TAIL_CHANNEL_SUFFIX} appended. Each message is the id of the entry before them, then each
 * entry's id, type and data, lines joined by `\n` (`parseTailMessage`), so a queue's event
 * followers share one subscribed connection and mostly need no read, instead of a blocked read
 * (and a connection) each.
 */
export function tailChannel(queue: QueueKeys, sessionId: string): string {
  return `${eventStreamKey(queue, sessionId)}${TAIL_CHANNEL_SUFFIX}`;
}

/** Pub/sub channel on which cancel requests reach the lease holder at once. */
export function cancelChannel(queueName: string): string {
  return `${queueName}:cancel`;
}

/** The deduplication id of a session's drain job (one active and one waiting at most). */
export function drainDedupId(sessionId: string): string {
  return `drain:${sessionId}`;
}

/** The data of a `timer` job: the timer, and how many firings it had when this alarm was set. */
export interface TimerJobData {
  sessionId: string;
  timerId: string;
  fireCount: number;
}

/**
 * The job id of a timer's alarm for firing `fireCount + 1`: one alarm per firing, whoever sets it
 * (the scheduler, the previous firing, the sweeper), so a second add of the same alarm is a no-op.
 * BullMQ refuses `:` in a custom id and session and timer ids may hold one: both go in base64url.
 */
export function timerJobId(sessionId: string, timerId: string, fireCount: number): string {
  return `timer_${Buffer.from(sessionId).toString('base64url')}_${Buffer.from(timerId).toString('base64url')}_${fireCount}`;
}

/**
 * A tenant's line of waiting drains (fair dispatch, docs/fair-dispatch.md): a sorted set, member the
 * session id, score the Redis time (ms) it joined. `line:` keeps every line apart from
 * {@link fairTenantsKey}, whatever the tenant's name.
 */
export function fairLineKey(queueName: string, tenant: string): string {
  return `${queueName}:fair:line:${tenant}`;
}

/** The set of tenants that may have a non-empty line: what the sweeper trims. */
export function fairTenantsKey(queueName: string): string {
  return `${queueName}:fair:tenants`;
}

/**
 * The raw jobs of a session waiting to be ingested, in add order (a sorted set: member the job id,
 * score its number from {@link rawOrderSeqKey}): `<queue>:raw-order:<sessionId>` (src/worker/raw-ingest-order.ts).
 */
export function rawOrderKey(queueName: string, sessionId: string): string {
  return `${queueName}:raw-order:${sessionId}`;
}

/** The counter that numbers raw jobs in the order BullMQ handed them out: `<queue>:raw-order-seq`. */
export function rawOrderSeqKey(queueName: string): string {
  return `${queueName}:raw-order-seq`;
}
