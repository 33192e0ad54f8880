import type { RedisConnection } from '../fleet/redis-connection.js';
import { drainDedupId } from '../fleet/fleet-keys.js';
import type { QueueShards } from '../fleet/queue-shards.js';
import { shardOf } from '../fleet/redis-layout.js';

/**
 * For each session, whether its drain job is waiting to run: its deduplication key names a job in the
 * queue's `prioritized` or `delayed` set. Keys are built from the queue's prefix, as BullMQ's own
 * scripts build them: they share the slot of KEYS[1], the queue's meta key, which routes the call to
 * its node on a cluster. ARGV: `bull:<queue>:`, the dedup id prefix, session ids.
 */
const WAITING_DRAINS = `
local out = {}
for i = 3, #ARGV do
  local id = redis.call('GET', ARGV[1] .. 'de:' .. ARGV[2] .. ARGV[i])
  local waiting = 0
  if id and (redis.call('ZSCORE', ARGV[1] .. 'prioritized', id) or redis.call('ZSCORE', ARGV[1] .. 'delayed', id)) then waiting = 1 end
  out[#out + 1] = waiting
end
return out`;

/**
 * The sessions among `sessionIds` whose drain is already waiting (prioritized) or delayed, in one
 * round trip. The sweeper skips them: a kick would be absorbed and their key is not stray. Without
 * this, a sweep over a deep backlog made four Redis calls per waiting session (up to 500 per sweep);
 * with fair dispatch the sweep job, which has no priority, runs on time instead of behind the backlog
 * (docs/fair-dispatch.md). Drains in the plain wait list (FIFO dispatch) are not looked for: those
 * sessions take the sweeper's full check, as before.
 */
export async function waitingDrains(redis: RedisConnection, queues: QueueShards, sessionIds: readonly string[]): Promise<Set<string>> {
  const byQueue = new Map<number, string[]>();
  for (const id of sessionIds) {
    const shard = shardOf(queues.layout, id);
    byQueue.set(shard, (byQueue.get(shard) ?? []).concat(id));
  }
  const waiting = new Set<string>();
  for (const [shard, ids] of byQueue) {
    const prefix = queues.queues[shard]!.qualifiedName;
    const flags = (await redis.eval(WAITING_DRAINS, 1, `${prefix}:meta`, `${prefix}:`, drainDedupId(''), ...ids)) as number[];
    ids.forEach((id, i) => flags[i] === 1 && waiting.add(id));
  }
  return waiting;
}
