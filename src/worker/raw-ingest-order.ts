import { createHash } from 'node:crypto';
import type { RedisConnection } from '../fleet/redis-connection.js';
import { rawOrderKey, rawOrderSeqKey } from '../fleet/fleet-keys.js';
import { keyRootOfQueue } from '../fleet/redis-layout.js';

/**
 * Keeps the raw path in add order per session (docs/client.md, "Ordering guarantee"). BullMQ hands
 * jobs out in the order they were added (it moves each one from the wait list to the head of the
 * active list, atomically), but several worker slots then ingest them at once, and the first to
 * commit got the lower seq. So before a raw `send`/`resume` job is ingested, the gate script gives
 * every raw job in the active list that has no place yet the next number of the queue's counter,
 * oldest take first, and files it in its session's order set. A job is ingested only when it is
 * first in its session's set; it leaves the set once its input is committed, or when it is rejected.
 *
 * A job keeps its number for life (a field of its BullMQ hash), so a job delayed for a retry, or
 * handed to another worker by the stalled check, keeps its place and the jobs after it wait for it.
 * An entry whose job is gone, finished, or replaced by another job under the same id is dropped by
 * the next gate that meets it, so a crash never blocks a session.
 *
 * A job waits in its slot while the job before it is being taken or ingested, which is short. When
 * the one before it is delayed (a failed ingest waiting to be tried again, a tenant over its rate) or
 * the wait passes {@link RAW_ORDER_HOLD_MS}, the job is put back as delayed instead, so waiting jobs
 * never fill every slot.
 */

/**
 * KEYS: active list, order counter, this session's order set, delayed set.
 * ARGV: job key prefix (`bull:<queue>:`), this job's id, order set key prefix.
 * Returns `{'go', deferrals}`, or `{'wait', id, 'pending'|'delayed', due ms}` for the job before it.
 * A job whose data this script cannot read as JSON with a string `sessionId` gets number 0 and no
 * place: it is not ordered (such data fails validation anyway).
 */
const GATE = `
local active = redis.call('LRANGE', KEYS[1], 0, -1)
for i = #active, 1, -1 do
  local id = active[i]
  local jobKey = ARGV[1] .. id
  local f = redis.call('HMGET', jobKey, 'name', 'lf_order')
  if (f[1] == 'send' or f[1] == 'resume') and not f[2] then
    local ok, data = pcall(cjson.decode, redis.call('HGET', jobKey, 'data') or '')
    if ok and type(data) == 'table' and type(data.sessionId) == 'string' and data.sessionId ~= '' then
      local n = redis.call('INCR', KEYS[2])
      redis.call('HSET', jobKey, 'lf_order', n)
      redis.call('ZADD', ARGV[3] .. data.sessionId, n, id)
    else
      redis.call('HSET', jobKey, 'lf_order', 0)
    end
  end
end
local own = redis.call('HMGET', ARGV[1] .. ARGV[2], 'lf_order', 'lf_deferrals')
local deferrals = tonumber(own[2] or '0') or 0
local mine = tonumber(own[1] or '0') or 0
if mine == 0 then return {'go', deferrals} end
for _ = 1, 100 do
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if #first == 0 or first[1] == ARGV[2] or tonumber(first[2]) > mine then return {'go', deferrals} end
  local id = first[1]
  local f = redis.call('HMGET', ARGV[1] .. id, 'lf_order', 'finishedOn')
  if tonumber(f[1] or '-1') ~= tonumber(first[2]) or f[2] then
    redis.call('ZREM', KEYS[3], id)
  else
    local score = redis.call('ZSCORE', KEYS[4], id)
    if score then return {'wait', id, 'delayed', tostring(math.floor(tonumber(score) / 4096))} end
    return {'wait', id, 'pending', '0'}
  end
end
return {'wait', '', 'pending', '0'}`;
const GATE_SHA = createHash('sha1').update(GATE).digest('hex');

/** The longest a job waits in its slot for the job before it, before it is put back as delayed. */
export const RAW_ORDER_HOLD_MS = 2_000;

/** What the gate decided: ingest now, or put the job back as delayed until `deferUntil` (ms since epoch). */
export type RawOrderGate = { go: true; deferrals: number } | { go: false; deferUntil: number };

export interface RawJobRef {
  id: string;
  /** `job.queueQualifiedName`: the prefix of the queue's BullMQ keys. */
  queueQualifiedName: string;
}

export class RawIngestOrder {
  readonly #redis: RedisConnection;
  readonly #queueName: string;
  readonly #now: () => number;
  /** Jobs of this process waiting for a session's order set to move. */
  readonly #waiters = new Map<string, Set<() => void>>();

  constructor(redis: RedisConnection, queueName: string, now: () => number = Date.now) {
    this.#redis = redis;
    this.#queueName = queueName;
    this.#now = now;
  }

  /** Waits until the job is first of its session's raw jobs, or says how long to delay it. */
  async take(job: RawJobRef, sessionId: string, signal?: AbortSignal): Promise<RawOrderGate> {
    const started = this.#now();
    let pause = 2;
    for (;;) {
      const answer = (await this.#gate(job, sessionId)) as [string, number | string, string?, string?];
      if (answer[0] === 'go') return { go: true, deferrals: Number(answer[1]) };
      const now = this.#now();
      // Before it is a job delayed for a retry: wait for it out of the slot, until just after its due time.
      if (answer[2] === 'delayed') return { go: false, deferUntil: Math.min(now + 60_000, Math.max(now + 100, Number(answer[3]) + 50)) };
      if (now - started >= RAW_ORDER_HOLD_MS || signal?.aborted === true) return { go: false, deferUntil: now + 250 };
      await this.#released(sessionId, pause);
      pause = Math.min(pause * 2, 100);
    }
  }

  /** The job's input is committed (or the job was rejected): the next raw job of its session may go. */
  async release(job: RawJobRef, sessionId: string): Promise<void> {
    await this.#redis.zrem(rawOrderKey(keyRootOfQueue(job.queueQualifiedName, this.#queueName), sessionId), job.id);
    for (const wake of this.#waiters.get(sessionId) ?? []) wake();
  }

  /** Counts a put-back, so it does not count toward the starts a failing ingest is allowed. */
  async deferred(job: RawJobRef): Promise<void> {
    await this.#redis.hincrby(`${job.queueQualifiedName}:${job.id}`, 'lf_deferrals', 1);
  }

  #gate(job: RawJobRef, sessionId: string): Promise<unknown> {
    const prefix = `${job.queueQualifiedName}:`;
    // On a cluster the shard's hash tag: every key here shares the slot of the job's queue.
    const root = keyRootOfQueue(job.queueQualifiedName, this.#queueName);
    const keys = [`${prefix}active`, rawOrderSeqKey(root), rawOrderKey(root, sessionId), `${prefix}delayed`];
    const args = [prefix, job.id, rawOrderKey(root, '')];
    return this.#redis.evalsha(GATE_SHA, keys.length, ...keys, ...args).catch((error: unknown) => {
      // NOSCRIPT: the script did not run; sending it whole is safe.
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return this.#redis.eval(GATE, keys.length, ...keys, ...args);
    });
  }

  /** Resolves when this process releases a job of the session, or after `ms` (another process may have). */
  #released(sessionId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.#waiters.get(sessionId);
      if (waiters === undefined) this.#waiters.set(sessionId, (waiters = new Set()));
      const set = waiters;
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(sessionId) === set) this.#waiters.delete(sessionId);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }
}

/** The session id of raw job data, when it has a usable one (the ingest validates it in full). */
export function rawSessionId(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const sessionId = (data as { sessionId?: unknown }).sessionId;
  return typeof sessionId === 'string' && sessionId !== '' ? sessionId : undefined;
}
