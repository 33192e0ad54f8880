import type { Redis } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';

/** A job that was stored under other bytes than its id as read. */
export interface StoredJobId {
  /** Length of the id as stored, in bytes (never the bytes themselves: they are the producer's). */
  bytes: number;
  /** False when the id as read was already another job's: the job stays under its stored bytes. */
  moved: boolean;
}

/** A job's id as read, its queue's key prefix (`job.queueQualifiedName`) and its lock token. */
export interface ActiveJobRef {
  id: string | undefined;
  queueQualifiedName: string;
  token: string | undefined;
}

/**
 * A job stored under an id that is not UTF-8 text (docs/fleet.md, "The raw path"; S5). BullMQ's
 * Node client packs a short custom id with msgpackr, which writes half a UTF-16 surrogate pair
 * (`'bad\ud83d'`) as the bytes `ED A0 BD`: the job's keys are `bull:<queue>:bad\xED\xA0\xBD…`. The
 * worker reads the id back through ioredis as text, with U+FFFD in place of each such byte, and every
 * key BullMQ derives from that text names nothing: no call can finish the job (`Missing key …
 * moveToFinished`), and it went active → stalled → waiting until BullMQ's stalled check gave up.
 *
 * This moves such a job under its id as read, in one script, so that BullMQ's own `moveToFailed` can
 * then fail it, and says so; null when the id is the stored one. Only an id read with U+FFFD is looked
 * at (nothing is read for any other), and one whose lock under that id holds this worker's token is
 * genuine: a producer may use U+FFFD itself. The stored id is found among the active list's entries
 * by its bytes, and the script moves it only while its lock holds this worker's token.
 */
export async function reidentifyJob(redis: RedisConnection, job: ActiveJobRef): Promise<StoredJobId | null> {
  const { id, token } = job;
  if (id === undefined || token === undefined || !id.includes('\uFFFD')) return null;
  const prefix = `${job.queueQualifiedName}:`;
  if ((await redis.get(`${prefix}${id}:lock`)) === token) return null;
  const active = await redis.lrangeBuffer(`${prefix}active`, 0, -1);
  for (const storedId of storedIdsReadAs(active, id)) {
    const outcome = await moveJob(redis, prefix, storedId, id, token);
    if (outcome !== NOT_OURS) return { bytes: storedId.length, moved: outcome === MOVED };
  }
  return null;
}

/** The entries of a job list whose bytes are not `readId`'s UTF-8 but decode to it, each once. */
export function storedIdsReadAs(entries: readonly Buffer[], readId: string): Buffer[] {
  const readBytes = Buffer.from(readId, 'utf8');
  const found: Buffer[] = [];
  for (const entry of entries) {
    if (entry.equals(readBytes) || entry.toString('utf8') !== readId) continue;
    if (!found.some((seen) => seen.equals(entry))) found.push(entry);
  }
  return found;
}

/** The suffixes of a job's own keys (BullMQ's `removeJobKeys`, and the lock): the job hash first, the lock second. */
const JOB_KEY_SUFFIXES = ['', ':lock', ':logs', ':dependencies', ':processed', ':failed', ':unsuccessful'];

const MOVED = 1;
const NOT_OURS = 0;

/**
 * KEYS: the active list, the stalled set, then each of the job's keys under its stored id followed by
 * the same key under the id as read (in {@link JOB_KEY_SUFFIXES} order), then its deduplication key if
 * it has one. ARGV: the stored id, the id as read, the lock token. Returns 1 when moved; 0 when the
 * stored id's lock is not this token or the job is not active (not this worker's job); -1 when the id
 * as read is already another job's.
 */
const MOVE_JOB_SCRIPT = `
local storedId, readId, token = ARGV[1], ARGV[2], ARGV[3]
if redis.call('GET', KEYS[5]) ~= token then return 0 end
if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
if redis.call('LREM', KEYS[1], 1, storedId) == 0 then return 0 end
redis.call('LPUSH', KEYS[1], readId)
if redis.call('SREM', KEYS[2], storedId) == 1 then redis.call('SADD', KEYS[2], readId) end
for i = 3, ${2 + 2 * JOB_KEY_SUFFIXES.length}, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('RENAME', KEYS[i], KEYS[i + 1]) end
end
local dedupKey = KEYS[${3 + 2 * JOB_KEY_SUFFIXES.length}]
if dedupKey and redis.call('GET', dedupKey) == storedId then
  local ttl = redis.call('PTTL', dedupKey)
  if ttl > 0 then redis.call('SET', dedupKey, readId, 'PX', ttl) else redis.call('SET', dedupKey, readId) end
end
return 1
`;

/** Runs {@link MOVE_JOB_SCRIPT} with every key and id as bytes, so the stored id reaches Redis as it is. */
async function moveJob(redis: RedisConnection, prefix: string, storedId: Buffer, readId: string, token: string): Promise<number> {
  const prefixBytes = Buffer.from(prefix, 'utf8');
  const storedKey = Buffer.concat([prefixBytes, storedId]);
  const readKey = Buffer.from(`${prefix}${readId}`, 'utf8');
  const keys: Buffer[] = [Buffer.from(`${prefix}active`), Buffer.from(`${prefix}stalled`)];
  for (const suffix of JOB_KEY_SUFFIXES) keys.push(Buffer.concat([storedKey, Buffer.from(suffix)]), Buffer.concat([readKey, Buffer.from(suffix)]));
  // BullMQ's deduplication key holds the job id (`<prefix>de:<deid>`): finishing the job frees it only by that id.
  const deduplicationId = await redis.hgetBuffer(storedKey, 'deid');
  if (deduplicationId !== null) keys.push(Buffer.concat([prefixBytes, Buffer.from('de:'), deduplicationId]));
  const outcome = await redis.eval(MOVE_JOB_SCRIPT, keys.length, ...keys, storedId, Buffer.from(readId, 'utf8'), token);
  return Number(outcome);
}
