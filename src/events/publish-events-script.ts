import type { Redis } from 'ioredis';
import type { EncodedEvent } from './event-body.js';

/**
 * The one Redis call per batch of a session's events (DESIGN.md §4.7). Atomically: allocate the
 * batch's `seq` numbers with INCRBY on the counter, XADD each entry with `{"seq":N,` prefixed to its
 * body, trim approximately, and push back both keys' idle expiry. Because numbering and appending
 * happen in one script, seq order equals stream order even with several publishers on one session.
 *
 * `skip` burns that many numbers first: events this publisher lost earlier leave a visible hole in
 * `seq`, so subscribers learn the stream is incomplete.
 *
 * KEYS: stream, seq counter. ARGV: maxLen, idle expiry seconds, skip, then `type`, `body` per entry.
 * Returns the new entries' stream ids in order.
 */
const PUBLISH_EVENTS_LUA = `
local count = (#ARGV - 3) / 2
local last = redis.call('INCRBY', KEYS[2], count + tonumber(ARGV[3]))
local ids = {}
for i = 1, count do
  local prefix = string.format('{"seq":%d,', last - count + i)
  ids[i] = redis.call('XADD', KEYS[1], '*', 'type', ARGV[2 * i + 2], 'data', prefix .. ARGV[2 * i + 3])
end
redis.call('XTRIM', KEYS[1], 'MAXLEN', '~', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return ids
`;

/** The ioredis command name; namespaced because the connection may be shared with other code. */
const COMMAND = 'loopfleetPublishEvents';

/** What the script needs besides the entries. */
export interface PublishTarget {
  streamKey: string;
  seqKey: string;
  maxLen: number;
  idleExpirySeconds: number;
}

/** Writes one batch (never empty) after burning `skip` seq numbers; resolves with the stream ids, in order. */
export type PublishEvents = (target: PublishTarget, entries: readonly EncodedEvent[], skip: number) => Promise<string[]>;

type ScriptFn = (...args: (string | number)[]) => Promise<string[]>;

/**
 * Registers the script on `redis` (once per connection object; ioredis sends EVALSHA and falls back
 * to EVAL when the server does not know the script) and returns a typed caller.
 */
export function publishEventsCommand(redis: Redis): PublishEvents {
  const commands = redis as unknown as Record<string, unknown>;
  if (typeof commands[COMMAND] !== 'function') {
    redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: PUBLISH_EVENTS_LUA });
  }
  const call = (commands[COMMAND] as ScriptFn).bind(redis);
  return (target, entries, skip) => {
    const args: (string | number)[] = [target.streamKey, target.seqKey, target.maxLen, target.idleExpirySeconds, skip];
    for (const entry of entries) args.push(entry.type, entry.body);
    return call(...args);
  };
}
