import { createHash } from 'node:crypto';
import type { RedisConnection } from './redis-connection.js';

/**
 * The token bucket of a tenant's admission rate (`maxInputsPerSecond`, docs/tenant-limits.md):
 * `<queue>:rate:<tenant>`, a hash of the tokens left and when they were counted. Its own namespace
 * (`<queue>:rate:`), which no other key of the queue can name.
 */
export function rateBucketKey(queueName: string, tenant: string): string {
  return `${queueName}:rate:${tenant}`;
}

/**
 * One call, atomic in Redis, on Redis's clock (so producers' clocks do not matter): refills the
 * bucket at `rate` tokens a second up to `burst`, then takes one token. Answers 0 when it took one,
 * else the milliseconds until one is there. The key expires once a full bucket would have refilled,
 * so an idle tenant leaves nothing behind. KEYS[1] the bucket; ARGV rate (per second), burst.
 */
const TAKE_TOKEN_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then tokens = math.min(burst, tokens + (now - at) * rate / 1000) end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait`;

const TAKE_TOKEN_SHA = createHash('sha1').update(TAKE_TOKEN_LUA).digest('hex');

/**
 * The burst a rate allows: one second's worth, at least one input (a rate below 1 a second admits
 * one input, then one every `1 / rate` seconds).
 */
export function rateBurst(ratePerSecond: number): number {
  return Math.max(1, ratePerSecond);
}

/** Takes one admission from the tenant's bucket: 0 when admitted, else the wait in milliseconds. */
export async function takeAdmission(redis: RedisConnection, queueName: string, tenant: string, ratePerSecond: number): Promise<number> {
  const key = rateBucketKey(queueName, tenant);
  const args = [String(ratePerSecond), String(rateBurst(ratePerSecond))];
  let reply: unknown;
  try {
    reply = await redis.evalsha(TAKE_TOKEN_SHA, 1, key, ...args);
  } catch (error) {
    // NOSCRIPT: the script did not run; sending it whole is safe.
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    reply = await redis.eval(TAKE_TOKEN_LUA, 1, key, ...args);
  }
  return typeof reply === 'number' && reply > 0 ? reply : 0;
}
