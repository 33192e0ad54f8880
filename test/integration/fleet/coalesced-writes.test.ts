import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { duplicateRedis, openRedis, type RedisConnection } from '../../../src/fleet/redis-connection.js';
import { countSocketWrites } from '../../support/socket-writes.js';

/**
 * The fleet's Redis connections send the commands of one event-loop turn in one write
 * (src/fleet/coalesced-writes.ts), without changing what is sent, its order, or when a later turn's
 * commands leave.
 */
describe('Redis commands of one turn leave in one write', () => {
  const opened: RedisConnection[] = [];
  const open = (options = {}): Redis => {
    const redis = openRedis({ url: inject('redisUrl'), clusterNodes: null }, options) as Redis;
    opened.push(redis);
    return redis;
  };
  const key = `coalesce:${process.pid}:${Date.now()}`;

  afterEach(async () => {
    const redis = opened[0] as Redis | undefined;
    if (redis !== undefined && redis.status === 'ready') await redis.del(key);
    for (const connection of opened.splice(0)) connection.disconnect();
  });

  it('sends 40 commands issued in one turn as one write, answered in order', async () => {
    const redis = open();
    await redis.ping();
    const counted = countSocketWrites(redis);
    const replies = await Promise.all(Array.from({ length: 40 }, () => redis.incr(key)));
    expect(replies).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(counted).toEqual({ writes: 1, chunks: 40 });
  });

  it('holds no command past its turn: commands awaited one by one leave one write each', async () => {
    const redis = open();
    await redis.ping();
    const counted = countSocketWrites(redis);
    for (let i = 1; i <= 5; i += 1) expect(await redis.incr(key)).toBe(i);
    expect(counted).toEqual({ writes: 5, chunks: 5 });
  });

  it('commands issued from promise continuations of the same turn join the write', async () => {
    const redis = open();
    await redis.ping();
    const counted = countSocketWrites(redis);
    // Each continuation runs in the microtasks of this turn, before its end.
    const chained = Array.from({ length: 10 }, (_, i) => Promise.resolve(i).then(() => redis.incr(key)));
    await Promise.all(chained);
    expect(counted.writes).toBe(1);
    expect(Number(await redis.get(key))).toBe(10);
  });

  it('a duplicate, and a connection after a reconnect, coalesce too', async () => {
    const redis = open();
    const copy = duplicateRedis(redis) as Redis;
    opened.push(copy);
    await Promise.all([redis.ping(), copy.ping()]);
    const copyCounted = countSocketWrites(copy);
    await Promise.all(Array.from({ length: 8 }, () => copy.incr(key)));
    expect(copyCounted.writes).toBe(1);

    const ready = new Promise((resolve) => redis.once('ready', resolve));
    redis.disconnect(true);
    await ready;
    const counted = countSocketWrites(redis);
    const replies = await Promise.all(Array.from({ length: 8 }, () => redis.incr(key)));
    expect(replies).toEqual(Array.from({ length: 8 }, (_, i) => i + 9));
    expect(counted.writes).toBe(1);
  });

  it('commands still corked when the connection drops never reached Redis: re-sent after the reconnect, they run once', async () => {
    const redis = open();
    await redis.ping();
    const cut = Promise.all(Array.from({ length: 5 }, () => redis.incr(key)));
    (redis as unknown as { stream: { destroy(): void } }).stream.destroy();
    expect((await cut).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(Number(await redis.get(key))).toBe(5);
  });
});
