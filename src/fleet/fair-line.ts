import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { RedisConnection } from './redis-connection.js';
import { drainDedupId, fairLineKey, fairTenantsKey } from './fleet-keys.js';

/** What runs the line scripts: BullMQ's own connection (`await queue.client`) or any ioredis client. */
export type LineRedis = RedisConnection | Cluster;

/**
 * Puts the session at the end of its tenant's line unless it is in it already (a drain of it is
 * waiting), and returns its place, 1 = first. The score is Redis's clock in milliseconds, so the
 * line is in joining order whichever host kicks and the sweeper can tell old members from new.
 * KEYS: line, tenants set. ARGV: session id, tenant.
 */
const JOIN_LINE = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[2])
end
return redis.call('ZRANK', KEYS[1], ARGV[1]) + 1`;

/**
 * Removes members that joined more than ARGV[3] ms ago and have no drain job at all (no BullMQ
 * deduplication key: the job finished, or was never added because the add failed after the join).
 * Such a member was left by a ZREM that never ran, and would push every later drain of its tenant one
 * place back for good. At most ARGV[4] members per line, oldest first. A line left empty leaves the
 * tenants set. Keys are built here from the prefixes, as BullMQ's own scripts do: on a cluster
 * they share the slot of the tenants set, whose key carries the shard's hash tag (`shardKeyRoot`).
 * KEYS: tenants set. ARGV: line key prefix, drain dedup key prefix, age ms, most per line.
 */
const TRIM_LINES = `
local t = redis.call('TIME')
local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[3])
local trimmed = 0
for _, tenant in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local line = ARGV[1] .. tenant
  for _, session in ipairs(redis.call('ZRANGEBYSCORE', line, '-inf', '(' .. cutoff, 'LIMIT', 0, tonumber(ARGV[4]))) do
    if redis.call('EXISTS', ARGV[2] .. session) == 0 then
      redis.call('ZREM', line, session)
      trimmed = trimmed + 1
    end
  end
  if redis.call('ZCARD', line) == 0 then redis.call('SREM', KEYS[1], tenant) end
end
return trimmed`;

const sha = (script: string): string => createHash('sha1').update(script).digest('hex');
const JOIN_LINE_SHA = sha(JOIN_LINE);
const TRIM_LINES_SHA = sha(TRIM_LINES);

/** EVALSHA, and EVAL once when the server does not hold the script yet (a restart, a flush). */
async function runScript(redis: LineRedis, script: string, digest: string, keys: string[], args: Array<string | number>): Promise<unknown> {
  try {
    return await redis.evalsha(digest, keys.length, ...keys, ...args);
  } catch (error) {
    // NOSCRIPT: the script did not run; sending it whole is safe.
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    return redis.eval(script, keys.length, ...keys, ...args);
  }
}

/** Joins the tenant's line (one round trip); returns the session's place in it, 1 = first. */
export async function joinFairLine(redis: LineRedis, keyRoot: string, tenant: string, sessionId: string): Promise<number> {
  const rank = await runScript(redis, JOIN_LINE, JOIN_LINE_SHA, [fairLineKey(keyRoot, tenant), fairTenantsKey(keyRoot)], [sessionId, tenant]);
  return Number(rank);
}

/** Leaves the tenant's line: its drain started (one ZREM). */
export async function leaveFairLine(redis: LineRedis, keyRoot: string, tenant: string, sessionId: string): Promise<void> {
  await redis.zrem(fairLineKey(keyRoot, tenant), sessionId);
}

/**
 * The sweeper's repair of the lines (one round trip): members older than `olderThanMs` without a
 * drain job are removed, so ranks heal after a lost ZREM. `bullPrefix` is the queue's key prefix as
 * BullMQ builds it (`bull:<queue>`); `keyRoot` the root of the queue's line keys (`shardKeyRoot`).
 * Returns how many were removed.
 */
export async function trimFairLines(redis: LineRedis, keyRoot: string, bullPrefix: string, olderThanMs: number, maxPerLine = 1_000): Promise<number> {
  const lineprefix = fairLineKey(keyRoot, '');
  const dedupPrefix = `${bullPrefix}:de:${drainDedupId('')}`;
  return Number(await runScript(redis, TRIM_LINES, TRIM_LINES_SHA, [fairTenantsKey(keyRoot)], [lineprefix, dedupPrefix, olderThanMs, maxPerLine]));
}
