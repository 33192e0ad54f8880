import type { Redis } from 'ioredis';
import { InfrastructureError } from '../core/errors/index.js';
import type { EncodedEvent } from './event-body.js';

/**
 * The one Redis call per write of the publisher (DESIGN.md §4.7), carrying a batch of events for each
 * of several sessions. Atomically, per session: allocate the batch's `seq` numbers with INCRBY on its
 * counter, XADD each entry with `{"seq":N,` prefixed to its body, trim approximately, and push back
 * both keys' idle expiry. Because numbering and appending happen in one script, seq order equals
 * stream order even with several publishers on one session.
 *
 * Each session's part runs under `redis.pcall`: a session whose keys fail (a key of the wrong type)
 * gets its error message back in place of its ids, and the other sessions' parts still apply.
 *
 * `skip` burns that many numbers first: events this publisher lost earlier leave a visible hole in
 * `seq`, so subscribers learn the stream is incomplete.
 *
 * KEYS: stream and seq counter of each session, in turn. ARGV: maxLen, idle expiry seconds, then for
 * each session `skip`, the entry count, and `type`, `body` per entry. Returns, per session in order,
 * its new entries' stream ids, or an error message.
 *
 * All keys of a call must live on one Redis node: a single server or a primary with replicas (Redis
 * Cluster would need every stream key in one hash slot).
 */
const PUBLISH_EVENTS_LUA = `
local maxLen, ttl = ARGV[1], ARGV[2]
local results = {}
local a = 3
for s = 1, #KEYS / 2 do
  local stream, counter = KEYS[2 * s - 1], KEYS[2 * s]
  local skip, count = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local first = a + 2
  a = first + 2 * count
  local last = redis.pcall('INCRBY', counter, count + skip)
  if type(last) == 'table' then
    results[s] = last.err
  else
    local ids = {}
    for i = 1, count do
      local at = first + 2 * (i - 1)
      local id = redis.pcall('XADD', stream, '*', 'type', ARGV[at], 'data', string.format('{"seq":%d,', last - count + i) .. ARGV[at + 1])
      if type(id) == 'table' then
        ids = id.err
        break
      end
      ids[i] = id
    end
    if type(ids) == 'table' then
      redis.pcall('XTRIM', stream, 'MAXLEN', '~', maxLen)
      redis.pcall('EXPIRE', stream, ttl)
    end
    redis.pcall('EXPIRE', counter, ttl)
    results[s] = ids
  end
end
return results
`;

/** The ioredis command name; namespaced because the connection may be shared with other code. */
const COMMAND = 'loopfleetPublishSessionEvents';

/** A session's keys. */
export interface PublishTarget {
  streamKey: string;
  seqKey: string;
}

/** Retention applied to every stream a publisher writes. */
export interface PublishRetention {
  maxLen: number;
  idleExpirySeconds: number;
}

/** One session's part of a call: its entries (never empty), after burning `skip` seq numbers. */
export interface SessionBatch {
  target: PublishTarget;
  entries: readonly EncodedEvent[];
  skip: number;
}

/**
 * Writes the batches (of distinct sessions) in one call and resolves, per batch in order, with its
 * stream ids or the error that session's part met. Rejects when the call as a whole failed (the
 * connection, the script): then whether any part applied is unknown.
 */
export type PublishEvents = (batches: readonly SessionBatch[]) => Promise<(string[] | Error)[]>;

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

/**
 * Registers the script on `redis` (once per connection object; ioredis sends EVALSHA and falls back
 * to EVAL when the server does not know the script) and returns a typed caller.
 */
export function publishEventsCommand(redis: Redis, retention: PublishRetention): PublishEvents {
  const commands = redis as unknown as Record<string, unknown>;
  if (typeof commands[COMMAND] !== 'function') {
    redis.defineCommand(COMMAND, { lua: PUBLISH_EVENTS_LUA });
  }
  const call = (commands[COMMAND] as ScriptFn).bind(redis);
  return async (batches) => {
    const keys: string[] = [];
    const args: (string | number)[] = [retention.maxLen, retention.idleExpirySeconds];
    for (const batch of batches) {
      keys.push(batch.target.streamKey, batch.target.seqKey);
      args.push(batch.skip, batch.entries.length);
      for (const entry of batch.entries) args.push(entry.type, entry.body);
    }
    // numberOfKeys varies per call, so it leads the arguments (ioredis's dynamic-keys form).
    const reply = await call(keys.length, ...keys, ...args);
    if (!Array.isArray(reply) || reply.length !== batches.length) {
      throw new InfrastructureError(`publish script answered ${describe(reply)} for ${batches.length} session(s)`);
    }
    return reply.map((part: unknown, index) => {
      if (Array.isArray(part) && part.length === batches[index]!.entries.length) return part as string[];
      return new InfrastructureError(`Redis refused the events of stream ${batches[index]!.target.streamKey}: ${typeof part === 'string' ? part : describe(part)}`);
    });
  };
}

function describe(reply: unknown): string {
  return Array.isArray(reply) ? `an array of ${reply.length}` : typeof reply;
}
