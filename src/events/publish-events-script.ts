import { createHash } from 'node:crypto';
import { Command, type Redis } from 'ioredis';
import { isCluster, redisKeyPrefix, type RedisConnection } from '../fleet/redis-connection.js';
import { InfrastructureError, LeaseLostError } from '../core/errors/index.js';
import { FINISH_CHANNEL_SUFFIX, TAIL_CHANNEL_SUFFIX } from '../fleet/fleet-keys.js';
import type { EncodedEvent } from './event-body.js';

/**
 * The one Redis call per write of the publisher, carrying a batch of events for each
 * of several sessions. Atomically, per session: leave out each `input_finished` whose input already
 * has one on the stream, allocate the `seq` numbers of the entries left with INCRBY on its counter,
 * XADD each with `{"seq":N,` prefixed to its body, record the inputs just finished, trim
 * approximately, and push back the keys' idle expiry. Because numbering and appending happen in one
 * script, seq order equals stream order even with several publishers on one session.
 *
 * Exactly one `input_finished` per input (I6): a holder stalled past its lease between an input's
 * terminal commit and its publish can wake after the next holder republished the lost event. The
 * session's finished set (member and score: the input seq) says which inputs' finishes were written;
 * an input is added only after its XADD succeeded, in the same script, so "in the set" and "on the
 * stream" cannot disagree, and a refused XADD never hides a finish from the repair. A left-out entry
 * takes no `seq` (a hole would tell subscribers events were lost) and its place in the reply is ''.
 * The set keeps the newest {@link FINISHES_KEPT} inputs: only the last inputs can have a late finish.
 * Each finish written is also announced on the session's finish channel (`finishChannel`: the stream
 * key with `:finishes` appended) as `<stream id> <data>`, for `result()`'s waiters; nobody
 * subscribed, it costs Redis a lookup. A part that appended entries to a followed stream (its tail
 * channel, `tailChannel`: `:tail` appended, has a subscriber) also publishes them there, lines
 * joined by `\n`: the id of the entry before them (`0-0` for none), then each entry's id, type
 * and data, as XREAD would return them. A follower whose cursor is that first id has them without
 * reading the stream (`NotifiedTails`). An unfollowed stream costs a lookup.
 *
 * Each session's part runs under `redis.pcall`: a session whose keys fail (a key of the wrong type)
 * gets its error message back in place of its ids, and the other sessions' parts still apply.
 *
 * `skip` burns that many numbers first: events this publisher lost earlier leave a visible hole in
 * `seq`, so subscribers learn the stream is incomplete.
 *
 * **What each part asks for** (its flags, a string of letters): `r` — answer the entries' ids; a
 * part without it answers only how many entries it wrote (most writes are fire-and-forget events
 * nobody awaits, and 28 ids per standard input were work for Redis and the client alike). A part
 * that marks finishes always asks for ids: a left-out finish is told by its ''. `e` — push back the
 * keys' idle expiry. A publisher asks for that at most once per {@link expiryRefreshMs} per session;
 * the script pushes it back anyway when the counter did not exist (the keys are new, or were
 * deleted with the session), and sets the finished set's whenever it adds to the set, so no key is
 * ever left without an expiry.
 *
 * **Deleted sessions** (a part's `fence`, a lease token): a part written under a lease is refused
 * whole when the session's deletion fence (`eventDeletedKey`, set by `sessions.delete` to the last
 * lease token the deleted session had) is at least that token. The part answers {@link FENCED_REPLY},
 * writes nothing and takes no `seq`: its events belong to the deleted session, and the stream may
 * already be that of a session created again under the same id, whose leases have larger tokens.
 *
 * KEYS: stream, seq counter, finished set and deletion fence of each session, in turn. ARGV: maxLen,
 * idle expiry seconds, the finished set's size, then for each session `skip`, the entry count, its
 * flags, its fence ('' for none), and `type`, `body`, a mark per entry (the input seq of an `input_finished`; `first` for the
 * `input_accepted` of input 1, which empties the finished set first — another session's under the
 * same id; else ''). Returns, per session in order: with `r`, an id per entry (the stream id, or ''
 * for a finish left out); without, the number of entries written; or an error message.
 *
 * All keys of a call must share one hash slot on a Redis Cluster: there the session's keys carry its
 * id as a hash tag, and the writer groups a turn's batches by slot (`EventWriter`).
 */
/** A part's answer when it was refused because its session was deleted under its lease (or a later one). */
export const FENCED_REPLY = 'loopfleet:fenced';

const PUBLISH_EVENTS_LUA = `
local maxLen, ttl, kept = ARGV[1], ARGV[2], tonumber(ARGV[3])
local results = {}
local a = 4
for s = 1, #KEYS / 4 do
  local stream, counter, finished, deleted = KEYS[4 * s - 3], KEYS[4 * s - 2], KEYS[4 * s - 1], KEYS[4 * s]
  local skip, count, flags, fence = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ARGV[a + 2], ARGV[a + 3]
  local report, refresh = string.find(flags, 'r', 1, true) ~= nil, string.find(flags, 'e', 1, true) ~= nil
  local first = a + 4
  a = first + 3 * count
  local written, writes, seen, err = {}, 0, {}, nil
  if fence ~= '' then
    local dead = redis.pcall('GET', deleted)
    if type(dead) == 'table' then
      err = dead.err
    elseif dead and tonumber(fence) <= tonumber(dead) then
      err = '${FENCED_REPLY}'
    end
  end
  for i = 1, err and 0 or count do
    local input = ARGV[first + 3 * i - 1]
    if input == 'first' then
      -- A session's input 1 was accepted: whatever finishes the set remembers are another session's.
      redis.pcall('DEL', finished)
      input = ''
    end
    local fresh = input == '' or not seen[input]
    if fresh and input ~= '' then
      seen[input] = true
      local score = redis.pcall('ZSCORE', finished, input)
      if type(score) == 'table' then
        err = score.err
        break
      end
      fresh = not score
    end
    written[i] = fresh
    if fresh then writes = writes + 1 end
  end
  local last = err and { err = err } or redis.pcall('INCRBY', counter, writes + skip)
  if type(last) == 'table' then
    results[s] = last.err
  else
    -- The counter was just created: so are the stream and the set, which have no expiry yet.
    if last == writes + skip then refresh = true end
    local ids, marked, seq = {}, false, last - writes
    -- Followed (someone subscribed to the tail channel): the entries appended, after the id before them.
    local tail, followers = nil, writes > 0 and redis.pcall('PUBSUB', 'NUMSUB', stream .. '${TAIL_CHANNEL_SUFFIX}')
    -- (A refused PUBSUB answers an error table, whose [2] is nil: not followed.)
    if type(followers) == 'table' and (tonumber(followers[2]) or 0) > 0 then
      local before = redis.pcall('XREVRANGE', stream, '+', '-', 'COUNT', 1)
      tail = { type(before) == 'table' and before[1] and before[1][1] or '0-0' }
    end
    for i = 1, count do
      local at = first + 3 * (i - 1)
      if written[i] then
        seq = seq + 1
        local data = string.format('{"seq":%d,', seq) .. ARGV[at + 1]
        local id = redis.pcall('XADD', stream, '*', 'type', ARGV[at], 'data', data)
        if type(id) == 'table' then
          ids = id.err
          break
        end
        if tail then
          tail[#tail + 1] = id
          tail[#tail + 1] = ARGV[at]
          tail[#tail + 1] = data
        end
        if report then ids[i] = id end
        if ARGV[at + 2] ~= '' and ARGV[at + 2] ~= 'first' then
          redis.pcall('ZADD', finished, ARGV[at + 2], ARGV[at + 2])
          redis.pcall('PUBLISH', stream .. '${FINISH_CHANNEL_SUFFIX}', id .. ' ' .. data)
          marked = true
        end
      elseif report then
        ids[i] = ''
      end
    end
    if marked then
      redis.pcall('ZREMRANGEBYRANK', finished, 0, -kept - 1)
      if not refresh then redis.pcall('EXPIRE', finished, ttl) end
    end
    -- Whatever was appended is announced, even when a later XADD failed.
    if tail and #tail > 1 then redis.pcall('PUBLISH', stream .. '${TAIL_CHANNEL_SUFFIX}', table.concat(tail, '\\n')) end
    if type(ids) == 'table' then
      redis.pcall('XTRIM', stream, 'MAXLEN', '~', maxLen)
      if refresh then redis.pcall('EXPIRE', stream, ttl) end
    end
    if refresh then
      redis.pcall('EXPIRE', counter, ttl)
      redis.pcall('EXPIRE', finished, ttl)
    end
    if type(ids) == 'table' and not report then ids = writes end
    results[s] = ids
  end
end
return results
`;

/**
 * Inputs per session whose written `input_finished` the finished set remembers (the newest by seq). A
 * late duplicate can only come from a holder stalled inside its last input(s), far within this.
 */
export const FINISHES_KEPT = 1_000;

/** A session's keys. */
export interface PublishTarget {
  streamKey: string;
  seqKey: string;
  /** The inputs whose `input_finished` was written (`eventFinishedKey`). */
  finishedKey: string;
  /** The deletion fence (`eventDeletedKey`): the last lease token of a session deleted under this id. */
  deletedKey: string;
}

/** Retention applied to every stream a publisher writes. */
export interface PublishRetention {
  maxLen: number;
  idleExpirySeconds: number;
}

/**
 * How long a publisher may leave a session's keys' idle expiry where its last push put it: a tenth of
 * the expiry, at most a minute. A stream therefore expires between `idleExpirySeconds` less this and
 * `idleExpirySeconds` after its last event (7 days less at most a minute, by default).
 */
export function expiryRefreshMs(idleExpirySeconds: number): number {
  return Math.min(60_000, idleExpirySeconds * 100);
}

/** One session's part of a call: its entries (never empty), after burning `skip` seq numbers. */
export interface SessionBatch {
  target: PublishTarget;
  entries: readonly EncodedEvent[];
  skip: number;
  /**
   * Answer the entries' stream ids (someone awaits one). A batch with a finish gets them anyway (a
   * left-out finish is told by its ''); any other, without it, is answered only as written.
   */
  report: boolean;
  /** Push back the keys' idle expiry (the script also does when the keys are new). */
  refreshExpiry: boolean;
  /**
   * The lease token every entry is written under (a worker's), or undefined (a producer's): refused
   * whole, with {@link LeaseLostError}, once the session was deleted with that token or a later one.
   */
  fence?: number | undefined;
}

/**
 * Writes the batches (of distinct sessions) in one call and resolves, per batch in order, with an id
 * per entry (its stream id, or '' for an `input_finished` left out because its input already had one)
 * when the batch asked for them (`report`), null when it did not and every entry was written, or the
 * error that session's part met. Rejects when the call as a whole failed (the connection, the
 * script): then whether any part applied is unknown.
 */
export type PublishEvents = (batches: readonly SessionBatch[]) => Promise<(string[] | null | Error)[]>;

/** A form of the script, and the SHA-1 `EVALSHA` names it by. */
type ScriptForm = { text: string; sha: string };
const scriptForm = (text: string): ScriptForm => ({ text, sha: createHash('sha1').update(text).digest('hex') });

/** On one Redis node: announcements on classic pub/sub channels. */
const SINGLE_NODE_SCRIPT = scriptForm(PUBLISH_EVENTS_LUA);

/** On a Redis Cluster: sharded channels of the shard's slot (`SPUBLISH`, `PUBSUB SHARDNUMSUB`), not broadcast to every node. */
const CLUSTER_SCRIPT = scriptForm(PUBLISH_EVENTS_LUA.replaceAll("'PUBSUB', 'NUMSUB'", "'PUBSUB', 'SHARDNUMSUB'").replaceAll("redis.pcall('PUBLISH'", "redis.pcall('SPUBLISH'"));

/** The error ioredis rejects the commands written on a connection that closed with (a cluster node's). */
const CONNECTION_CLOSED = 'Connection is closed.';

/** Sockets that were sent the script's text: the server knows it by its SHA there. */
const scriptSentOn = new WeakSet<object>();

/**
 * One call of the script, its arguments given as the array ioredis writes. A call carries thousands
 * of arguments (3 per entry); a command defined with `defineCommand` copies them three times before
 * writing them (the spread into the call, the script's `[sha, ...args]`, the command's `flat()`),
 * about 3 % of a worker's CPU. As ioredis does for scripts, the first call on a socket sends the
 * script's text (`EVAL`) and later ones its SHA (`EVALSHA`); a `NOSCRIPT` answer (the server's
 * script cache was flushed) makes the caller send the call again, which then carries the text.
 */
class PublishEventsCall extends Command {
  /** Set once ioredis writes the call to a socket (a call waiting in its offline queue is not yet). */
  written = false;

  /** Settles the call's promise, past any retry a cluster client set up around `reject`. */
  readonly #rejectCall: (error: Error) => void;

  constructor(
    args: string[],
    private readonly form: ScriptForm,
  ) {
    super('evalsha', [], { replyEncoding: 'utf8' });
    // Set after the constructor, which would copy and re-check them; every one is a string already.
    this.args = args;
    this.#rejectCall = this.reject;
  }

  override toWritable(socket: object): string | Buffer {
    const reject = this.reject;
    this.reject = (error: Error) => {
      if (error.message.includes('NOSCRIPT')) scriptSentOn.delete(socket);
      // A cluster client sends a call whose node connection closed to the slot's next owner. Written,
      // it may have run already: sent again, it could run twice, or after the session's next call.
      // It is given up instead (counted lost, a hole in `seq`), as on one node.
      if (error.message === CONNECTION_CLOSED) return this.#rejectCall.call(this, error);
      reject.call(this, error);
    };
    const sent = scriptSentOn.has(socket);
    if (!sent) scriptSentOn.add(socket);
    this.name = sent ? 'evalsha' : 'eval';
    this.args[0] = sent ? this.form.sha : this.form.text;
    this.written = true;
    return super.toWritable(socket);
  }
}

/** A script call awaited on a connection set up by {@link rejectInFlightOnClose}, and how to give up on it. */
interface PendingCall {
  call: PublishEventsCall;
  reject: (error: Error) => void;
}

/** The script calls awaited on each connection set up by {@link rejectInFlightOnClose}. */
const inFlight = new WeakMap<RedisConnection, Set<PendingCall>>();

/**
 * For a connection that does not re-send unanswered commands (`publisherConnection`): ioredis drops a
 * call that was written to the socket when such a connection closed, without ever settling it. From
 * now on, such calls on `redis` are rejected when it closes before they are answered: each may or may
 * not have run, and is counted lost. A call still in ioredis's offline queue (never written) is left
 * alone: it is sent once the connection is back, and settles then. A cluster needs none of this: its
 * node connections reject what was written on them when they close, and {@link PublishEventsCall}
 * keeps the cluster client from sending such a call again.
 */
export function rejectInFlightOnClose(redis: RedisConnection): void {
  if (inFlight.has(redis) || isCluster(redis)) return;
  const open = new Set<PendingCall>();
  inFlight.set(redis, open);
  redis.on('close', () => {
    for (const pending of [...open]) {
      if (!pending.call.written) continue;
      open.delete(pending);
      pending.reject(new Error('the connection closed with this publish in flight: it may or may not have been written'));
    }
  });
}

/** Sends `call`; on a connection set up by {@link rejectInFlightOnClose}, rejects when it closes with `call` written but unanswered. */
function sendCall(redis: RedisConnection, call: PublishEventsCall): Promise<unknown> {
  const sent = redis.sendCommand(call) as Promise<unknown>;
  const registry = inFlight.get(redis);
  if (registry === undefined) return sent;
  return new Promise<unknown>((resolve, reject) => {
    const pending: PendingCall = { call, reject };
    registry.add(pending);
    sent.then(
      (value) => {
        registry.delete(pending);
        resolve(value);
      },
      (error: unknown) => {
        registry.delete(pending);
        reject(error);
      },
    );
  });
}

/**
 * Returns a typed caller of the script on `redis`. Keys carry the connection's `keyPrefix`, as they
 * would through ioredis's own commands.
 */
export function publishEventsCommand(redis: RedisConnection, retention: PublishRetention): PublishEvents {
  const prefix = redisKeyPrefix(redis);
  const form = isCluster(redis) ? CLUSTER_SCRIPT : SINGLE_NODE_SCRIPT;
  const send = async (args: string[]): Promise<unknown> => {
    try {
      return await sendCall(redis, new PublishEventsCall(args, form));
    } catch (error) {
      // NOSCRIPT: the script did not run; sending it whole is safe.
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return sendCall(redis, new PublishEventsCall(args.slice(), form));
    }
  };
  return async (batches) => {
    // The script (set when written), numberOfKeys (it varies per call, so it leads), the keys, then
    // the other arguments.
    const args: string[] = ['', String(4 * batches.length)];
    for (const batch of batches) {
      const { target } = batch;
      args.push(prefix + target.streamKey, prefix + target.seqKey, prefix + target.finishedKey, prefix + target.deletedKey);
    }
    args.push(String(retention.maxLen), String(retention.idleExpirySeconds), String(FINISHES_KEPT));
    const reports: boolean[] = [];
    for (const batch of batches) {
      let report = batch.report;
      const at = args.length + 2;
      args.push(String(batch.skip), String(batch.entries.length), '', batch.fence === undefined ? '' : String(batch.fence));
      for (const entry of batch.entries) {
        if (entry.finishes !== undefined) report = true;
        args.push(entry.type, entry.body, entry.finishes !== undefined ? String(entry.finishes) : entry.firstInput === true ? 'first' : '');
      }
      args[at] = report ? (batch.refreshExpiry ? 're' : 'r') : batch.refreshExpiry ? 'e' : '';
      reports.push(report);
    }
    const reply = await send(args);
    if (!Array.isArray(reply) || reply.length !== batches.length) {
      throw new InfrastructureError(`publish script answered ${describe(reply)} for ${batches.length} session(s)`);
    }
    return reply.map((part: unknown, index) => {
      const batch = batches[index]!;
      // One id per entry, '' in the place of a finish left out (so positions still line up); or,
      // unasked, the count written — every entry, as only finishes are ever left out.
      if (reports[index] === true ? Array.isArray(part) && part.length === batch.entries.length : part === batch.entries.length) {
        return reports[index] === true ? (part as string[]) : null;
      }
      if (part === FENCED_REPLY) {
        return new LeaseLostError(`the session of stream ${batch.target.streamKey} was deleted: events written under its lease ${String(batch.fence)} are refused`, {
          details: { streamKey: batch.target.streamKey, leaseToken: batch.fence },
        });
      }
      return new InfrastructureError(`Redis refused the events of stream ${batch.target.streamKey}: ${typeof part === 'string' ? part : describe(part)}`);
    });
  };
}

function describe(reply: unknown): string {
  return Array.isArray(reply) ? `an array of ${reply.length}` : typeof reply === 'number' ? `the count ${reply}` : typeof reply;
}
